/**
 * Scenario 10: what a server holds in memory per 2025 session and per call
 * in flight over Streamable HTTP, and, reported only, what a 10 MB result
 * costs. Ours against (f), (g) and (h) fastmcp, each measure on a fresh
 * process of its own (a heap grown by one measure would absorb the next),
 * read from /proc (VmRSS; VmHWM, reset through `clear_refs`, for the peak).
 */
import type { ClientRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import {
  type RunContext,
  type Scenario,
  type ScenarioResult,
  type Table,
  type Target,
  serverInfo,
} from '../lib/scenario.js';
import { specLabel, type ServerKind, type ServerSpec } from '../lib/servers.js';
import { HttpServer, inBatches, uniqueId } from '../lib/http-load.js';
import { modernRequest } from '../lib/http-wire.js';
import { THREADS } from '../lib/zero-work.js';
import { median, sleep } from '#dist/src/probe/stats.js';

/** Calls in flight at once; a quick run: fewer (each is a request the loaded machine must parse). */
const inFlightOf = (quick: boolean) => (quick ? 32 : 256);
const BLOB_BYTES = 10 * 1024 * 1024;
/** How long the calls in flight may take to reach the server. */
const ARRIVE_WAIT_MS = 30_000;
const BLOB_TOOLS = fileURLToPath(new URL('../tools/blob.js', import.meta.url));

interface Params {
  sessions: number;
  inFlight: number;
  /** Measured cycles of calls in flight (after an untimed one, in a full run). */
  repeats: number;
  /** How long RSS is watched once every call in flight has arrived. */
  settleMs: number;
  /** How long RSS is read for each other figure (before, after the sessions), and the pause after a burst is cancelled. */
  readMs: number;
  blobSamples: number;
}
const params = (quick: boolean): Params =>
  quick
    ? { sessions: 32, inFlight: inFlightOf(quick), repeats: 1, settleMs: 150, readMs: 150, blobSamples: 0 }
    : { sessions: 1000, inFlight: inFlightOf(quick), repeats: 3, settleMs: 1000, readMs: 500, blobSamples: 5 };

const spec = (kind: ServerKind, quick: boolean): ServerSpec =>
  kind === 'ours'
    ? { kind, transport: 'http', threads: THREADS, args: ['--max-sessions', String(params(quick).sessions + 100)] }
    : { kind, transport: 'http', threads: THREADS };
const KINDS: readonly ServerKind[] = ['ours', 'sdk2-piscina', 'sdk2-coop', 'fastmcp'];
const NAMES: Partial<Record<ServerKind, string>> = {
  'sdk2-piscina': '(f)',
  'sdk2-coop': '(g)',
  fastmcp: '(h) fastmcp',
};
/** The large-result servers: ours with bench/tools/blob.ts beside the built-ins, (f) with `--blob`. */
const blobSpec = (kind: 'ours' | 'sdk2-piscina'): ServerSpec =>
  kind === 'ours'
    ? { kind, transport: 'http', threads: THREADS, args: ['--tools', BLOB_TOOLS], tag: 'with blob' }
    : { kind, transport: 'http', threads: THREADS, args: ['--blob'], tag: 'with blob' };

/** One server's figures (KiB). */
export interface MemoryFigures {
  server: string;
  sessions?: { count: number; beforeKb: number; afterKb: number; perSessionKb: number };
  /** The median cycle's figures; `perCall`: every cycle's. */
  inFlight?: { count: number; beforeKb: number; afterKb: number; perCallKb: number; perCall: number[] };
}

/** The median RSS over `ms`, read every 50 ms: a garbage collection in the middle moves it less than a single read. */
async function rssMedian(server: HttpServer, ms: number): Promise<number> {
  const reads: number[] = [];
  const end = performance.now() + ms;
  do {
    reads.push(server.memory()?.rssKb ?? Number.NaN);
    await sleep(50);
  } while (performance.now() < end);
  return median(reads.filter(Number.isFinite));
}

/** `count` 2025 sessions, each initialized and one zero-work call, left idle (no GET stream). */
async function idleSessions(server: HttpServer, count: number, readMs: number): Promise<MemoryFigures['sessions']> {
  const beforeKb = await rssMedian(server, readMs);
  await inBatches(Array.from({ length: count }), 32, async () => {
    const session = await server.openSession();
    if (!(await server.spin2025(session, { ms: 0 }))) throw new Error(`${server.label}: a session's call failed`);
  });
  const afterKb = await rssMedian(server, readMs);
  return { count, beforeKb, afterKb, perSessionKb: (afterKb - beforeKb) / count };
}

/**
 * `count` long calls at once (2026; fastmcp: 2025, in one session); once the
 * server reports them all (ours: in flight; a baseline: begun), RSS is read
 * for `settleMs`; then all are cancelled (their streams closed). An untimed
 * cycle first (`warm`), so that what the first burst allocates for good
 * (JIT code, pools, the heap's growth) is not counted per call; then
 * `repeats` cycles, and the median of their figures.
 */
async function callsInFlight(
  server: HttpServer,
  count: number,
  settleMs: number,
  readMs: number,
  repeats: number,
  warm: boolean,
): Promise<MemoryFigures['inFlight']> {
  const stats = await server.openSession();
  const session = server.spec.kind === 'fastmcp' ? await server.openSession() : undefined;
  const cycles: { beforeKb: number; afterKb: number; perCallKb: number }[] = [];
  for (let cycle = warm ? -1 : 0; cycle < repeats; cycle++) {
    const seen0 = server.spec.kind === 'ours' ? 0 : await server.callsSeen(stats);
    const beforeKb = await rssMedian(server, readMs);
    const held: ClientRequest[] = [];
    const args = { ms: 60_000, stageMs: 1 };
    const calls = Array.from({ length: count }, () =>
      (session
        ? server.spin2025(session, args, uniqueId(), (r) => held.push(r))
        : server.spin2026(args, (r) => held.push(r))
      ).catch(() => false),
    );
    const until = performance.now() + ARRIVE_WAIT_MS;
    let seen: number;
    while ((seen = (await server.callsSeen(stats)) - seen0) < count && performance.now() < until) await sleep(50);
    const afterKb = await rssMedian(server, settleMs);
    for (const r of held) r.destroy();
    await Promise.all(calls);
    if (seen < count)
      throw new Error(`${server.label}: only ${seen} of ${count} calls arrived in ${ARRIVE_WAIT_MS / 1000} s`);
    // Every call stopped before the next cycle's "before" (ours: none left in flight).
    const end = performance.now() + ARRIVE_WAIT_MS;
    while (server.spec.kind === 'ours' && (await server.callsSeen(stats)) > 0 && performance.now() < end)
      await sleep(50);
    await sleep(readMs);
    if (cycle >= 0) cycles.push({ beforeKb, afterKb, perCallKb: (afterKb - beforeKb) / count });
  }
  const mid = [...cycles].sort((a, b) => a.perCallKb - b.perCallKb)[Math.floor(cycles.length / 2)]!;
  return { count, ...mid, perCall: cycles.map((c) => c.perCallKb) };
}

/** One 10 MB result: ms to its last byte, and the peak RSS above the RSS before it (KiB). */
async function bigResult(server: HttpServer): Promise<{ ms: number; peakAboveKb: number | undefined; ok: boolean }> {
  const reset = server.resetPeak();
  const before = server.memory()!.rssKb;
  const id = uniqueId();
  const t0 = performance.now();
  const a = await server.send(modernRequest(id, 'tools/call', { name: 'blob', arguments: { bytes: BLOB_BYTES } }));
  const ms = a.endedAt - t0;
  const peak = server.memory()!.peakKb;
  return { ms, peakAboveKb: reset ? peak - before : undefined, ok: a.status === 200 && a.text.length >= BLOB_BYTES };
}

/** Ours ÷ a baseline, KiB per unit; no ratio where a figure is not above 0 (a collection between the reads outweighed what was added). */
function memoryTarget(name: string, ours: number, base: number): Target {
  const kib = `${ours.toFixed(1)} / ${base.toFixed(1)} KiB`;
  if (ours <= 0 || base <= 0)
    return { name, goal: '≤ 1.0×', measured: `– (${kib}: a figure ≤ 0 is within the RSS noise)`, met: ours <= base };
  return { name, goal: '≤ 1.0×', measured: `${(ours / base).toFixed(2)}× (${kib})`, met: ours <= base };
}

/** Scenario 10 (`--only http-memory`). */
export const httpMemory: Scenario = {
  id: 'http-memory',
  title: '10. Memory over Streamable HTTP: per idle 2025 session, per call in flight; a 10 MB result',
  estimateMs: (quick) => {
    const p = params(quick);
    return (
      5000 +
      KINDS.length * (p.sessions * 8 + (p.repeats + (quick ? 0 : 1)) * (p.settleMs + 1300 + p.inFlight * 5)) +
      p.blobSamples * 2 * 400
    );
  },

  async run(ctx: RunContext): Promise<ScenarioResult> {
    const p = params(ctx.quick);
    const figures = new Map<string, MemoryFigures>(
      KINDS.map((k) => [specLabel(spec(k, ctx.quick)), { server: specLabel(spec(k, ctx.quick)) }]),
    );
    const blobs: { server: string; ms: number; peakAboveKb: number | undefined; ok: boolean }[] = [];
    const started: HttpServer[] = [];
    const start = async (specs: readonly ServerSpec[]) => {
      const opened = await Promise.allSettled(specs.map((s) => HttpServer.start(s)));
      const ok = opened.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      started.push(...ok);
      const failed = opened.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
      return ok;
    };
    try {
      // Every process at once (start-up is module loading), then each measure on its own process, one server at a time
      // (a quick run, a smoke run, uses one process per server for both measures and leaves out the large result).
      const specs = KINDS.map((k) => spec(k, ctx.quick));
      const all = await start(ctx.quick ? specs : [...specs, ...specs, blobSpec('ours'), blobSpec('sdk2-piscina')]);
      const forSessions = all.slice(0, specs.length);
      const forCalls = ctx.quick ? forSessions : all.slice(specs.length, 2 * specs.length);
      const forBlobs = all.slice(2 * specs.length);
      for (const s of new Set([...forSessions, ...forCalls])) {
        // Warm: the paths the measure takes, JIT-compiled and their lazy state built, before the first RSS read.
        const session = await s.openSession();
        for (let i = 0; i < 20; i++) await s.spin2025(session, { ms: 0 });
        if (s.spec.kind !== 'fastmcp') for (let i = 0; i < 20; i++) await s.spin2026({ ms: 0 });
      }
      ctx.progress.tick(5000);
      for (const s of forSessions) {
        figures.get(s.label)!.sessions = await idleSessions(s, p.sessions, p.readMs);
        ctx.progress.tick(p.sessions * 8);
      }
      for (const s of forCalls) {
        figures.get(s.label)!.inFlight = await callsInFlight(
          s,
          p.inFlight,
          p.settleMs,
          p.readMs,
          p.repeats,
          !ctx.quick,
        );
        ctx.progress.tick((p.repeats + (ctx.quick ? 0 : 1)) * (p.settleMs + 1300 + p.inFlight * 5));
      }
      for (const s of forBlobs) await bigResult(s); // warm: the first large string and buffer of each process
      for (let i = 0; i < p.blobSamples; i++) {
        for (const s of i % 2 === 0 ? forBlobs : [...forBlobs].reverse()) {
          blobs.push({ server: s.label, ...(await bigResult(s)) });
          ctx.progress.tick(400);
        }
      }
    } finally {
      await Promise.all(started.map((s) => s.close()));
    }

    const kb = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? '–' : v.toFixed(1));
    const mb = (v: number) => (v / 1024).toFixed(1);
    const memory: Table = {
      title: `Resident memory over HTTP (KiB): ${p.sessions} idle 2025 sessions, ${p.inFlight} calls in flight`,
      columns: [
        'server',
        'RSS before sessions (MiB)',
        'after (MiB)',
        'per idle session (KiB)',
        'RSS before calls (MiB)',
        'while in flight (MiB)',
        'per call in flight (KiB)',
      ],
      rows: [...figures.values()].map((f) => [
        f.server,
        f.sessions ? mb(f.sessions.beforeKb) : '–',
        f.sessions ? mb(f.sessions.afterKb) : '–',
        kb(f.sessions?.perSessionKb),
        f.inFlight ? mb(f.inFlight.beforeKb) : '–',
        f.inFlight ? mb(f.inFlight.afterKb) : '–',
        kb(f.inFlight?.perCallKb),
      ]),
      note: '(h) fastmcp speaks 2025-11-25 only: its calls in flight share one session.',
    };
    const blobRows = [...new Set(blobs.map((b) => b.server))].map((server) => {
      const of = blobs.filter((b) => b.server === server && b.ok);
      const peaks = of.map((b) => b.peakAboveKb).filter((v): v is number => v !== undefined);
      return [
        server,
        of.length,
        blobs.filter((b) => b.server === server && !b.ok).length,
        of.length ? median(of.map((b) => b.ms)).toFixed(1) : '–',
        peaks.length ? mb(median(peaks)) : '–',
      ];
    });
    const blobTable: Table = {
      title:
        'A 10 MB result over HTTP (2026), reported only: time to the last byte and peak RSS above the RSS before the call (medians)',
      columns: ['server', 'answered', 'failed', 'ms to last byte', 'peak RSS above before (MiB)'],
      rows: blobRows,
    };

    const ours = figures.get(specLabel(spec('ours', ctx.quick)))!;
    const targets: Target[] = [];
    for (const k of KINDS.filter((x) => x !== 'ours')) {
      const b = figures.get(specLabel(spec(k, ctx.quick)))!;
      if (ours.sessions && b.sessions)
        targets.push(
          memoryTarget(
            `RSS per idle 2025 session vs ${NAMES[k]}, ${p.sessions} sessions`,
            ours.sessions.perSessionKb,
            b.sessions.perSessionKb,
          ),
        );
      if (ours.inFlight && b.inFlight)
        targets.push(
          memoryTarget(
            `RSS per call in flight vs ${NAMES[k]}, ${p.inFlight} calls`,
            ours.inFlight.perCallKb,
            b.inFlight.perCallKb,
          ),
        );
    }
    return {
      id: this.id,
      title: this.title,
      method: [
        `Each server with ${THREADS} worker threads, unpinned; ours with the built-in tools and \`--max-sessions ${p.sessions + 100}\`, the baselines with \`spin\`. Each measure runs on a fresh process of its own, warmed with 20 zero-work calls per era; RSS is VmRSS from /proc.`,
        `- **Per idle session**: ${p.sessions} 2025-11-25 sessions opened 32 at a time (\`initialize\`, \`notifications/initialized\`, one zero-work call; no GET stream), then left idle; (RSS after − RSS before) ÷ ${p.sessions}, each RSS the median of reads every 50 ms over ${p.readMs / 1000} s.`,
        `- **Per call in flight**: ${p.inFlight} calls spin(60 s, 1 ms stages) sent at once as 2026 requests ((h): 2025, in one session), so ${THREADS} run and the rest wait; once the server reports them all (ours: \`inFlight\` in executor://stats; a baseline: its handlers begun), (the median RSS over the next ${p.settleMs / 1000} s − the median over ${p.readMs / 1000} s before) ÷ ${p.inFlight}; then every stream is closed (cancelled). ${ctx.quick ? 'One cycle' : `An untimed cycle, then ${p.repeats}; the median cycle`} is reported.`,
        `- **A 10 MB result** (reported only, no target): ours with \`--tools dist-dev/bench/tools/blob.js\` beside the built-in tools, (f) with \`--blob\`; each call returns ${BLOB_BYTES} characters of text built in a worker; the time from sending to the answer's last byte, and the peak RSS (VmHWM, reset through /proc/<pid>/clear_refs before each call) above the RSS before it. One untimed call each, then ${p.blobSamples} alternating${ctx.quick ? '; left out of a quick run, which also measures sessions and calls in flight on one process per server' : ''}.`,
      ].join('\n'),
      params: { threads: THREADS, blobBytes: BLOB_BYTES, ...p },
      servers: [
        ...KINDS.map((k) => spec(k, ctx.quick)),
        ...(ctx.quick ? [] : [blobSpec('ours'), blobSpec('sdk2-piscina')]),
      ].map(serverInfo),
      tables: [memory, blobTable],
      headline: {
        ...memory,
        title: 'Memory over HTTP',
        columns: ['server', 'sessions before', 'after', 'KiB/session', 'calls before', 'in flight', 'KiB/call'],
      },
      charts: [],
      targets,
      samples: { figures: [...figures.values()], blobs },
    };
  },
};
