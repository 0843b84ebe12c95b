/**
 * Scenario 3: what a call costs when it does nothing. Zero-work `spin`
 * (ms: 0) calls at 1, 8 and 32 in flight, ours against (e) (SDK + Piscina +
 * a SharedArrayBuffer flag: the minimal cooperative design), (b) (SDK +
 * Piscina + abort), (a) (no pool at all) and (f) (the SDK 2.x McpServer
 * and serveStdio that ours is built on, with Piscina: the 2.x line's own
 * cost per call, since (e) and (b) stand on SDK 1.32) and (g) ((e)'s design on
 * the SDK 2.x line: ours' own layers apart from the line's cost). The client is a raw JSON-RPC
 * client (bench/lib/raw-client.ts), not the SDK `Client`, and when `taskset`
 * exists the client is pinned to one core and every server to the other, so
 * the client's cost neither competes with the server nor dilutes the ratios.
 * Windows alternate between the servers at each load in turn, starting one
 * server further on each round and running backwards every other round: a
 * shared VM's speed drifts by a third within minutes, so the windows a ratio
 * pairs must be seconds apart, and no server may always follow the same one.
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
import { pinSelf, type RawConnection } from '../lib/raw-client.js';
import {
  CLIENT_CPU,
  openAndWarm,
  SERVER_CPU,
  THREADS,
  throughput,
  windowOrder,
  zeroWorkParams,
  type ZeroWorkParams,
} from '../lib/zero-work.js';
import { fmt, median, pairedRatio, pairedRatios, summarize, us } from '#dist/src/probe/stats.js';

const IN_FLIGHT = [1, 8, 32] as const;

const params = (quick: boolean): ZeroWorkParams => zeroWorkParams(quick, 8, 1000);

const SPECS: readonly ServerSpec[] = [
  { kind: 'ours', transport: 'stdio', threads: THREADS },
  { kind: 'piscina-coop', transport: 'stdio', threads: THREADS },
  { kind: 'piscina-abort', transport: 'stdio', threads: THREADS },
  { kind: 'main-thread', transport: 'stdio', threads: THREADS },
  // The same SDK 2.x stack as ours (McpServer, serveStdio) with Piscina and nothing else: what the 2.x line itself costs per call.
  { kind: 'sdk2-piscina', transport: 'stdio', threads: THREADS },
  // (e)'s design on the SDK 2.x line (its low-level Server, serveStdio): ours ÷ (g) is the cost of ours' own layers.
  { kind: 'sdk2-coop', transport: 'stdio', threads: THREADS },
];
const OURS = specLabel(SPECS[0]!);
const COOP = specLabel(SPECS[1]!);
const NAIVE = specLabel(SPECS[2]!);
const SDK2 = specLabel(SPECS[4]!);
const COOP2 = specLabel(SPECS[5]!);
/** The labels the scenario's windows carry, for tools that read its results (bench/pool-runs.ts). */
export const OVERHEAD_LABELS = { ours: OURS, coop: COOP, naive: NAIVE, coop2: COOP2 } as const;

/** One closed-loop window, as `results.json` keeps it (`samples.windows`). */
export interface ZeroWorkWindow {
  server: string;
  round: number;
  inFlight: number;
  calls: number;
  seconds: number;
  callsPerSecond: number;
  serverCpuUsPerCall?: number;
  serverMainCpuUsPerCall?: number;
  clientCpuUsPerCall: number;
  /** 1 in flight: this window's round-trip p50 (ms). */
  p50Ms?: number;
}

export const overhead: Scenario = {
  id: 'overhead',
  title: '3. Overhead of a zero-work call',
  estimateMs: (quick) => {
    const p = params(quick);
    return SPECS.length * (p.warmupMs + p.rounds * IN_FLIGHT.length * p.windowMs + 1500);
  },

  async run(ctx: RunContext): Promise<ScenarioResult> {
    const p = params(ctx.quick);
    const sequential = new Map<string, number[]>(SPECS.map((s) => [specLabel(s), []]));
    const windows: ZeroWorkWindow[] = [];
    const restore = ctx.unpinned ? undefined : await pinSelf(CLIENT_CPU);
    const pinned = restore !== undefined;
    const conns: RawConnection[] = [];
    try {
      await openAndWarm(SPECS, pinned ? SERVER_CPU : undefined, p, conns);
      ctx.progress.tick(SPECS.length * p.warmupMs);
      for (let round = 0; round < p.rounds; round++) {
        for (const inFlight of IN_FLIGHT) {
          for (const at of windowOrder(round, conns.length)) {
            const conn = conns[at]!;
            for (let w = 0; w < 20; w++) await conn.warm();
            const latencies = inFlight === 1 ? [] : undefined;
            const t = await throughput(conn, inFlight, p.windowMs, latencies);
            if (latencies) sequential.get(conn.label)!.push(...latencies);
            const perCall = (ms: number | undefined) => (ms === undefined ? undefined : us(ms / t.calls) * 1000);
            windows.push({
              server: conn.label,
              round,
              inFlight,
              calls: t.calls,
              seconds: us(t.seconds),
              callsPerSecond: Math.round(t.calls / t.seconds),
              serverCpuUsPerCall: perCall(t.serverCpuMs),
              serverMainCpuUsPerCall: perCall(t.serverMainCpuMs),
              clientCpuUsPerCall: perCall(t.clientCpuMs)!,
              ...(latencies && { p50Ms: summarize(latencies).p50 }),
            });
            ctx.progress.tick(p.windowMs);
          }
        }
      }
    } finally {
      await Promise.all(conns.map((c) => c.close()));
      if (restore !== undefined) await pinSelf(restore);
    }

    const labels = SPECS.map(specLabel);
    const of = (label: string, inFlight: number) =>
      windows.filter((w) => w.server === label && w.inFlight === inFlight);
    const med = (label: string, inFlight: number, f: (w: ZeroWorkWindow) => number | undefined) => {
      const v = of(label, inFlight)
        .map(f)
        .filter((x): x is number => x !== undefined);
      return v.length ? median(v) : Number.NaN;
    };
    const ratio = (a: string, b: string, inFlight: number, f: (w: ZeroWorkWindow) => number | undefined) =>
      pairedRatio(
        windows,
        (w) => w.server === a && w.inFlight === inFlight,
        (w) => w.server === b && w.inFlight === inFlight,
        (w) => f(w) ?? Number.NaN,
      );
    const cps = (w: ZeroWorkWindow) => w.callsPerSecond;
    const cpu = (w: ZeroWorkWindow) => w.serverCpuUsPerCall;
    const one = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : '–');

    const rows = labels.flatMap((label) =>
      IN_FLIGHT.map((n) => {
        const all = med(label, n, cpu);
        const main = med(label, n, (w) => w.serverMainCpuUsPerCall);
        const vs = (other: string) =>
          label === other
            ? '1× / 1×'
            : `${ratio(label, other, n, cps).toFixed(2)}× / ${ratio(label, other, n, cpu).toFixed(2)}×`;
        return [
          label,
          n,
          Math.round(med(label, n, cps)),
          one(all),
          one(main),
          one(all - main),
          one(med(label, n, (w) => w.clientCpuUsPerCall)),
          vs(COOP),
          vs(SDK2),
          vs(COOP2),
        ];
      }),
    );
    const table: Table = {
      title: `Zero-work calls: calls/s and server CPU per call (µs), ${THREADS} threads, medians over ${p.rounds} windows`,
      columns: [
        'server',
        'in flight',
        'calls/s',
        'server process',
        'main thread',
        'workers',
        'client',
        '÷ (e): calls/s / CPU (paired)',
        '÷ (f): calls/s / CPU (paired)',
        '÷ (g): calls/s / CPU (paired)',
      ],
      rows,
      note: pinned
        ? `Client on CPU ${CLIENT_CPU}, every server on CPU ${SERVER_CPU} (taskset).`
        : ctx.unpinned
          ? 'Unpinned (--unpinned): the client and every server run where the OS puts them.'
          : 'taskset not found: client and servers unpinned.',
    };
    const latencyRows = labels.map((label) => {
      const s = summarize(sequential.get(label)!);
      return [label, s.n, fmt(s.p50), fmt(s.p90), fmt(s.p99)];
    });
    const latency: Table = {
      title: 'Zero-work call round trip, one call in flight (ms)',
      columns: ['server', 'calls', 'p50', 'p90', 'p99'],
      rows: latencyRows,
    };

    /**
     * How many rounds went ours' way, beside each paired median: with a true ratio near 1, one run's median falls on
     * either side of it, and only this count says whether the side is more than the machine's drift.
     */
    const aheadIn = (
      base: string,
      n: number,
      f: (w: ZeroWorkWindow) => number | undefined,
      better: (r: number) => boolean,
    ) => {
      const each = pairedRatios(
        windows,
        (w) => w.server === OURS && w.inFlight === n,
        (w) => w.server === base && w.inFlight === n,
        (w) => f(w) ?? Number.NaN,
      );
      return `ours ahead in ${each.filter(better).length} of ${each.length} rounds`;
    };
    /** Ours against one baseline at every load: calls/s (≥ 1.0×) and server CPU per call (≤ 1.0×), paired by round. */
    const against = (base: string, name: string): Target[] => [
      ...IN_FLIGHT.map((n): Target => {
        const r = ratio(OURS, base, n, cps);
        return {
          name: `Zero-work calls/s vs ${name}, ${n} in flight`,
          goal: '≥ 1.0×',
          measured: `${r.toFixed(2)}× paired by round, ${aheadIn(base, n, cps, (x) => x > 1)} (medians ${Math.round(med(OURS, n, cps))} / ${Math.round(med(base, n, cps))})`,
          met: r >= 1,
        };
      }),
      ...IN_FLIGHT.map((n): Target => {
        const r = ratio(OURS, base, n, cpu);
        return {
          name: `Server CPU per call vs ${name}, ${n} in flight`,
          goal: '≤ 1.0×',
          measured: `${r.toFixed(2)}× paired by round, ${aheadIn(base, n, cpu, (x) => x < 1)} (medians ${one(med(OURS, n, cpu))} / ${one(med(base, n, cpu))} µs)`,
          met: r <= 1,
        };
      }),
    ];
    const targets: Target[] = [
      ...against(COOP, '(e)'),
      // (e)'s design on ours' own SDK line: what is left of these once the line's cost is set aside.
      ...against(COOP2, '(g)'),
      (() => {
        // Paired by round like every other ratio here: pooled p50s mix windows minutes apart on a drifting machine.
        const r = ratio(OURS, NAIVE, 1, (w) => w.p50Ms);
        const pooled = `${fmt(summarize(sequential.get(OURS)!).p50)} / ${fmt(summarize(sequential.get(NAIVE)!).p50)} ms`;
        return {
          name: 'Zero-work round trip p50, 1 in flight, vs (b)',
          goal: '≤ 1.0× (b)',
          measured: `${r.toFixed(2)}× paired by round, ${aheadIn(
            NAIVE,
            1,
            (w) => w.p50Ms,
            (x) => x < 1,
          )} (pooled p50s ${pooled})`,
          met: r <= 1,
        };
      })(),
    ];
    return {
      id: this.id,
      title: this.title,
      method: [
        `Servers run with ${THREADS} worker threads ((a) runs the call on its main thread). A raw JSON-RPC client (one line per call, responses matched by id) drives each server over stdio${pinned ? `, pinned to CPU ${CLIENT_CPU} with every server on CPU ${SERVER_CPU}` : ''}. First an untimed warm-up per server at 32 in flight (JIT): ${p.warmupMs / 1000} s and at least ${p.warmupCalls} calls. Each round, at 1, then 8, then 32 callers, every server in turn (the round's first server one further on each round, and every other round backwards, so that no server always follows the same one): 20 untimed calls, then a closed-loop window of ${p.windowMs / 1000} s (each caller sends its next call when its last is answered; calls/s = answered calls / time to the last answer). ${p.rounds} rounds. No progress token is sent.`,
        "CPU per call is read from /proc during each window (10 ms ticks): the server process (all threads), its main thread alone, and the client. Ratios are paired: the median over rounds of ours ÷ (e) (or (f), (g)) measured in the same round at the same load, a few seconds apart. The round-trip target is paired the same way (each window's p50); the latency table pools every window. Each target also counts the rounds that went ours' way.",
      ].join('\n'),
      params: { threads: THREADS, inFlight: IN_FLIGHT, pinned, ...p },
      servers: SPECS.map(serverInfo),
      tables: [table, latency],
      headline: {
        ...table,
        title: 'Zero-work calls',
        columns: ['server', 'in flight', 'calls/s', 'CPU µs', 'main', 'workers', 'client', '÷ (e)', '÷ (f)', '÷ (g)'],
      },
      charts: [
        {
          file: 'overhead-latency-cdf',
          title: 'Zero-work call latency, one in flight',
          spec: cdfChart(
            'Zero-work call latency, one call in flight',
            labels.map((label) => ({ label, values: sequential.get(label)! })),
          ),
        },
        {
          file: 'overhead-throughput',
          title: 'Zero-work calls per second',
          spec: barChart(
            'Zero-work calls per second, 32 in flight (each bar: one window)',
            windows
              .filter((w) => w.inFlight === 32)
              .map((w) => ({ group: w.server, series: `round ${w.round + 1}`, value: w.callsPerSecond })),
            'calls per second',
            'server',
          ),
        },
      ],
      targets,
      samples: { sequential: Object.fromEntries(sequential), windows },
    };
  },
};
