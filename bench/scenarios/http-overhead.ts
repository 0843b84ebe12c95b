/**
 * Scenario 8: what a zero-work call costs over Streamable HTTP, in both eras,
 * at 1, 32 and 256 concurrent clients. Ours (`serve --transport http`, the
 * built-in tools) against (f) (SDK 2.x `McpServer` + Piscina + the request's
 * signal) and (g) (SDK 2.x `Server` + Piscina + a SharedArrayBuffer flag),
 * both served the SDK's way (bench/baselines/http-serve.ts), and in the 2025
 * era also (h) (fastmcp's httpStream). The load is a raw keep-alive HTTP
 * client (bench/lib/http-load.ts) pinned to one core, every server to the
 * other; a 2026 client is a stateless request at a time, a 2025 client its
 * own session. Windows alternate between the servers as scenario 3's do.
 */
import { barChart, cdfChart } from '#dist/src/probe/charts.js';
import {
  type RunContext,
  type Scenario,
  type ScenarioResult,
  type Table,
  type Target,
  serverInfo,
} from '../lib/scenario.js';
import { specLabel, type ServerSpec } from '../lib/servers.js';
import { pinSelf } from '../lib/raw-client.js';
import { CLIENT_CPU, SERVER_CPU, THREADS, windowOrder } from '../lib/zero-work.js';
import { type Caller, HttpServer, httpThroughput, inBatches, type LegacySession } from '../lib/http-load.js';
import { fmt, median, pairedRatio, pairedRatios, summarize, us } from '#dist/src/probe/stats.js';

/** The concurrent clients of a full run's windows. */
export const HTTP_CLIENTS = [1, 32, 256] as const;
/** A protocol revision by its year: 2025-11-25 (sessions) or 2026-07-28 (stateless). */
export type Era = '2025' | '2026';
/**
 * The loads of an era: a quick run leaves out 256 clients in 2025, whose 256
 * sessions per server (two requests and a server each) take longer to open
 * than the smoke run's whole budget on a busy machine.
 */
const clientsOf = (quick: boolean, era: Era): readonly number[] => (quick && era === '2025' ? [1, 32] : HTTP_CLIENTS);
const ERAS: readonly Era[] = ['2026', '2025'];

interface Params {
  rounds: number;
  windowMs: number;
  warmupMs: number;
  warmupCalls: number;
}
const params = (quick: boolean): Params =>
  quick
    ? { rounds: 1, windowMs: 200, warmupMs: 150, warmupCalls: 0 }
    : { rounds: 4, windowMs: 1000, warmupMs: 1000, warmupCalls: 3000 };

const SPECS: readonly ServerSpec[] = [
  { kind: 'ours', transport: 'http', threads: THREADS },
  { kind: 'sdk2-piscina', transport: 'http', threads: THREADS },
  { kind: 'sdk2-coop', transport: 'http', threads: THREADS },
  { kind: 'fastmcp', transport: 'http', threads: THREADS },
];
/** fastmcp speaks 2025-11-25 only. */
const servesEra = (spec: ServerSpec, era: Era) => era === '2025' || spec.kind !== 'fastmcp';

/** The labels the scenario's windows carry, for tools that read its results (bench/pool-runs.ts). */
export const HTTP_LABELS = {
  ours: specLabel(SPECS[0]!),
  f: specLabel(SPECS[1]!),
  g: specLabel(SPECS[2]!),
  h: specLabel(SPECS[3]!),
} as const;
/** Each baseline's short name in targets. */
export const HTTP_BASELINES: readonly {
  readonly label: string;
  readonly name: string;
  readonly eras: readonly Era[];
}[] = [
  { label: HTTP_LABELS.f, name: '(f)', eras: ['2026', '2025'] },
  { label: HTTP_LABELS.g, name: '(g)', eras: ['2026', '2025'] },
  { label: HTTP_LABELS.h, name: '(h) fastmcp', eras: ['2025'] },
];

/** One closed-loop window, as `results.json` keeps it (`samples.windows`). */
export interface HttpWindow {
  server: string;
  era: Era;
  clients: number;
  round: number;
  calls: number;
  /** Calls not answered with a result (left out of every other figure). */
  failures: number;
  seconds: number;
  callsPerSecond: number;
  serverCpuUsPerCall?: number;
  serverMainCpuUsPerCall?: number;
  clientCpuUsPerCall: number;
  /** 1 client: this window's round-trip p50 and p99 (ms). */
  p50Ms?: number;
  p99Ms?: number;
}

/** Scenario 8 (`--only http-overhead`). */
export const httpOverhead: Scenario = {
  id: 'http-overhead',
  title: '8. Overhead of a zero-work call over Streamable HTTP, both eras',
  estimateMs: (quick) => {
    const p = params(quick);
    const windows = ERAS.reduce(
      (n, era) => n + SPECS.filter((s) => servesEra(s, era)).length * clientsOf(quick, era).length,
      0,
    );
    return 4000 + windows * (p.warmupMs + p.rounds * p.windowMs) + (quick ? 2500 : 5000);
  },

  async run(ctx: RunContext): Promise<ScenarioResult> {
    const p = params(ctx.quick);
    const windows: HttpWindow[] = [];
    const sequential = new Map<string, number[]>();
    const restore = ctx.unpinned ? undefined : await pinSelf(CLIENT_CPU);
    const pinned = restore !== undefined;
    const servers: HttpServer[] = [];
    const sessions = new Map<HttpServer, LegacySession[]>();
    const maxClients = Math.max(...clientsOf(ctx.quick, '2025'));
    const callers = (server: HttpServer, era: Era, n: number): Caller[] =>
      era === '2026'
        ? Array.from({ length: n }, () => () => server.spin2026({ ms: 0 }))
        : sessions
            .get(server)!
            .slice(0, n)
            .map((session) => () => server.spin2025(session, { ms: 0 }));
    try {
      const opened = await Promise.allSettled(
        SPECS.map((spec) => HttpServer.start(spec, pinned ? SERVER_CPU : undefined)),
      );
      for (const r of opened) if (r.status === 'fulfilled') servers.push(r.value);
      const failed = opened.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
      // A 2025 client is a session: one per caller, opened (initialize, initialized) before any window.
      for (const s of servers)
        sessions.set(s, await inBatches(Array.from({ length: maxClients }), 32, () => s.openSession()));
      ctx.progress.tick(4000);
      for (const era of ERAS) {
        for (const s of servers.filter((x) => servesEra(x.spec, era))) {
          for (let n = (await httpThroughput(s, callers(s, era, 32), p.warmupMs)).calls; n < p.warmupCalls;)
            n += (await httpThroughput(s, callers(s, era, 32), 250)).calls;
          ctx.progress.tick(p.warmupMs * clientsOf(ctx.quick, era).length);
        }
      }
      for (let round = 0; round < p.rounds; round++) {
        for (const era of ERAS) {
          const these = servers.filter((x) => servesEra(x.spec, era));
          for (const clients of clientsOf(ctx.quick, era)) {
            for (const at of windowOrder(round, these.length)) {
              const server = these[at]!;
              const warm = callers(server, era, 1)[0]!;
              for (let w = 0; w < 5; w++) await warm();
              const latencies = clients === 1 ? [] : undefined;
              const t = await httpThroughput(server, callers(server, era, clients), p.windowMs, latencies);
              if (latencies)
                sequential.set(`${server.label}|${era}`, [
                  ...(sequential.get(`${server.label}|${era}`) ?? []),
                  ...latencies,
                ]);
              const perCall = (ms: number | undefined) =>
                ms === undefined || t.calls === 0 ? undefined : us(ms / t.calls) * 1000;
              const lat = latencies && latencies.length ? summarize(latencies) : undefined;
              windows.push({
                server: server.label,
                era,
                clients,
                round,
                calls: t.calls,
                failures: t.failures,
                seconds: us(t.seconds),
                callsPerSecond: t.seconds > 0 ? Math.round(t.calls / t.seconds) : 0,
                serverCpuUsPerCall: perCall(t.serverCpuMs),
                serverMainCpuUsPerCall: perCall(t.serverMainCpuMs),
                clientCpuUsPerCall: perCall(t.clientCpuMs)!,
                ...(lat && { p50Ms: lat.p50, p99Ms: lat.p99 }),
              });
              ctx.progress.tick(p.windowMs);
            }
          }
        }
      }
    } finally {
      await Promise.all(servers.map((s) => s.close()));
      if (restore !== undefined) await pinSelf(restore);
    }

    const labels = SPECS.map(specLabel);
    const of = (label: string, era: Era, n: number) =>
      windows.filter((w) => w.server === label && w.era === era && w.clients === n);
    const med = (label: string, era: Era, n: number, f: (w: HttpWindow) => number | undefined) => {
      const v = of(label, era, n)
        .map(f)
        .filter((x): x is number => x !== undefined);
      return v.length ? median(v) : Number.NaN;
    };
    const pick = (label: string, era: Era, n: number) => (w: HttpWindow) =>
      w.server === label && w.era === era && w.clients === n;
    const ratio = (a: string, b: string, era: Era, n: number, f: (w: HttpWindow) => number | undefined) =>
      pairedRatio(windows, pick(a, era, n), pick(b, era, n), (w) => f(w) ?? Number.NaN);
    const cps = (w: HttpWindow) => w.callsPerSecond;
    const cpu = (w: HttpWindow) => w.serverCpuUsPerCall;
    const one = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : '–');
    const xx = (v: number) => (Number.isFinite(v) ? `${v.toFixed(2)}×` : '–');

    const rows = ERAS.flatMap((era) =>
      labels
        .filter((_, i) => servesEra(SPECS[i]!, era))
        .flatMap((label) =>
          clientsOf(ctx.quick, era).map((n) => {
            const failures = of(label, era, n).reduce((k, w) => k + w.failures, 0);
            const vs = (b: (typeof HTTP_BASELINES)[number]) =>
              !b.eras.includes(era)
                ? '–'
                : label === b.label
                  ? '1× / 1×'
                  : `${xx(ratio(label, b.label, era, n, cps))} / ${xx(ratio(label, b.label, era, n, cpu))}`;
            return [
              label,
              era,
              n,
              Math.round(med(label, era, n, cps)),
              one(med(label, era, n, cpu)),
              one(med(label, era, n, (w) => w.serverMainCpuUsPerCall)),
              one(med(label, era, n, (w) => w.clientCpuUsPerCall)),
              failures,
              ...HTTP_BASELINES.map(vs),
            ];
          }),
        ),
    );
    const table: Table = {
      title: `Zero-work calls over HTTP: calls/s and server CPU per call (µs), ${THREADS} threads, medians over ${p.rounds} windows`,
      columns: [
        'server',
        'era',
        'clients',
        'calls/s',
        'server CPU µs',
        'main thread µs',
        'client µs',
        'failed calls',
        ...HTTP_BASELINES.map((b) => `÷ ${b.name}: calls/s / CPU (paired)`),
      ],
      rows,
      note: pinned
        ? `Client on CPU ${CLIENT_CPU}, every server on CPU ${SERVER_CPU} (taskset).`
        : 'Unpinned: the client and the servers run where the OS puts them.',
    };
    const latencyRows = ERAS.flatMap((era) =>
      labels
        .filter((_, i) => servesEra(SPECS[i]!, era))
        .map((label) => {
          const s = summarize(sequential.get(`${label}|${era}`) ?? []);
          return [label, era, s.n, fmt(s.p50), fmt(s.p90), fmt(s.p99)];
        }),
    );
    const latency: Table = {
      title: 'Idle round trip over HTTP, one client (ms)',
      columns: ['server', 'era', 'calls', 'p50', 'p90', 'p99'],
      rows: latencyRows,
    };

    const aheadIn = (
      base: string,
      era: Era,
      n: number,
      f: (w: HttpWindow) => number | undefined,
      better: (r: number) => boolean,
    ) => {
      const each = pairedRatios(windows, pick(HTTP_LABELS.ours, era, n), pick(base, era, n), (w) => f(w) ?? Number.NaN);
      return `ours ahead in ${each.filter(better).length} of ${each.length} rounds`;
    };
    const targets: Target[] = [];
    for (const era of ERAS) {
      for (const b of HTTP_BASELINES.filter((x) => x.eras.includes(era))) {
        for (const n of clientsOf(ctx.quick, era)) {
          const r = ratio(HTTP_LABELS.ours, b.label, era, n, cps);
          targets.push({
            name: `HTTP ${era} zero-work calls/s vs ${b.name}, ${n} client${n === 1 ? '' : 's'}`,
            goal: '≥ 1.0×',
            measured: `${xx(r)} paired by round, ${aheadIn(b.label, era, n, cps, (v) => v > 1)} (medians ${Math.round(med(HTTP_LABELS.ours, era, n, cps))} / ${Math.round(med(b.label, era, n, cps))})`,
            met: r >= 1,
          });
        }
        for (const n of clientsOf(ctx.quick, era)) {
          const r = ratio(HTTP_LABELS.ours, b.label, era, n, cpu);
          targets.push({
            name: `HTTP ${era} server CPU per call vs ${b.name}, ${n} client${n === 1 ? '' : 's'}`,
            goal: '≤ 1.0×',
            measured: `${xx(r)} paired by round, ${aheadIn(b.label, era, n, cpu, (v) => v < 1)} (medians ${one(med(HTTP_LABELS.ours, era, n, cpu))} / ${one(med(b.label, era, n, cpu))} µs)`,
            met: r <= 1,
          });
        }
        const r = ratio(HTTP_LABELS.ours, b.label, era, 1, (w) => w.p50Ms);
        targets.push({
          name: `HTTP ${era} idle round trip p50 vs ${b.name}, 1 client`,
          goal: '≤ 1.0×',
          measured: `${xx(r)} paired by round, ${aheadIn(
            b.label,
            era,
            1,
            (w) => w.p50Ms,
            (v) => v < 1,
          )} (medians ${fmt(med(HTTP_LABELS.ours, era, 1, (w) => w.p50Ms))} / ${fmt(med(b.label, era, 1, (w) => w.p50Ms))} ms)`,
          met: r <= 1,
        });
      }
    }
    const failedAll = windows.reduce((k, w) => k + w.failures, 0);
    return {
      id: this.id,
      title: this.title,
      method: [
        `Servers run with ${THREADS} worker threads; ours with the built-in tools (\`serve --transport http\`), each baseline with the one tool \`spin\`. A raw keep-alive HTTP client (node:http \`Agent\`, one socket per concurrent client) drives each server${pinned ? `, pinned to CPU ${CLIENT_CPU} with every server on CPU ${SERVER_CPU}` : ''}. 2026-07-28: each call a stateless POST carrying the \`_meta\` envelope and the \`MCP-Protocol-Version\`, \`Mcp-Method\` and \`Mcp-Name\` headers. 2025-11-25: each client its own session (\`initialize\`, \`notifications/initialized\`, then calls with \`Mcp-Session-Id\`), ${maxClients} sessions per server opened before the first window; no GET stream. Request ids are unique across the run; a call counts only when its response is a result that is not a tool error (failures are counted apart: ${failedAll} in this run).`,
        `First an untimed warm-up per server and era at 32 clients: ${p.warmupMs / 1000} s and at least ${p.warmupCalls} calls. Each round, in each era, at ${clientsOf(ctx.quick, '2026').join(', ')} clients (2025: ${clientsOf(ctx.quick, '2025').join(', ')}), every server in turn (the first one further on each round, every other round backwards): 5 untimed calls, then a closed-loop window of ${p.windowMs / 1000} s. ${p.rounds} rounds. CPU per call is read from /proc over each window (10 ms ticks): the server process (all threads), its main thread alone, and the client. Ratios are paired by round: the median over rounds of ours ÷ the baseline at the same era and load, a few seconds apart; the idle round trip is each 1-client window's p50, paired the same way. (h) fastmcp speaks 2025-11-25 only.`,
      ].join('\n'),
      params: {
        threads: THREADS,
        clients: { 2026: clientsOf(ctx.quick, '2026'), 2025: clientsOf(ctx.quick, '2025') },
        pinned,
        ...p,
      },
      servers: SPECS.map(serverInfo),
      tables: [table, latency],
      headline: {
        ...table,
        title: 'Zero-work calls over HTTP',
        columns: [
          'server',
          'era',
          'clients',
          'calls/s',
          'CPU µs',
          'main',
          'client',
          'failed',
          ...HTTP_BASELINES.map((b) => `÷ ${b.name}`),
        ],
      },
      charts: [
        {
          file: 'http-overhead-latency-cdf',
          title: 'Zero-work call over HTTP, one client',
          spec: cdfChart(
            'Zero-work call over HTTP, one client',
            [...sequential].map(([key, values]) => ({ label: key.replace('|', ', '), values })),
          ),
        },
        {
          file: 'http-overhead-throughput',
          title: 'Zero-work calls per second over HTTP, 32 clients',
          spec: barChart(
            'Zero-work calls per second over HTTP, 32 clients (each bar: one window)',
            windows
              .filter((w) => w.clients === 32)
              .map((w) => ({
                group: `${w.server}, ${w.era}`,
                series: `round ${w.round + 1}`,
                value: w.callsPerSecond,
              })),
            'calls per second',
            'server, era',
          ),
        },
      ],
      targets,
      samples: { sequential: Object.fromEntries(sequential), windows },
    };
  },
};
