/**
 * Scenario 3: what the pool costs on a call that does nothing. Zero-work
 * `spin` (ms: 0) calls, ours against (a) (no pool at all) and (b) (a bare
 * Piscina pool): per-call latency one call at a time, and calls per second
 * with many calls in flight. Rounds alternate between the servers.
 */
import { barChart, cdfChart } from '../../src/probe/charts.js';
import { type RunContext, type Scenario, type ScenarioResult, type Table, type Target, serverInfo } from '../lib/scenario.js';
import { type Connection, specLabel, type ServerSpec, withConnections } from '../lib/servers.js';
import { alternate, fmt, median, pairedRatio, summarize, us } from '../../src/probe/stats.js';

const THREADS = 2;
const CONCURRENCY = 16;

interface Params {
  rounds: number;
  sequentialCalls: number;
  windowMs: number;
  /** The diagnostic window with one call per worker. */
  pairWindowMs: number;
  warmupMs: number;
}

const params = (quick: boolean): Params => (quick ? { rounds: 2, sequentialCalls: 100, windowMs: 750, pairWindowMs: 300, warmupMs: 400 } : { rounds: 6, sequentialCalls: 300, windowMs: 3000, pairWindowMs: 1500, warmupMs: 1500 });

const SPECS: readonly ServerSpec[] = [
  { kind: 'ours', transport: 'stdio', threads: THREADS },
  { kind: 'piscina-abort', transport: 'stdio', threads: THREADS },
  { kind: 'main-thread', transport: 'stdio', threads: THREADS },
  { kind: 'ours', transport: 'http', threads: THREADS },
];

/** Closed loop: `concurrency` callers, each sending its next call when the last one is answered, for `windowMs`. */
async function throughput(conn: Connection, concurrency: number, windowMs: number): Promise<{ calls: number; seconds: number; latencies: number[]; serverCpuMs?: number; serverMainCpuMs?: number; clientCpuMs: number }> {
  const latencies: number[] = [];
  const cpu0 = conn.cpuTimes();
  const client0 = process.cpuUsage();
  const start = performance.now();
  const end = start + windowMs;
  let last = start;
  const caller = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      await conn.callSpin({ ms: 0 });
      last = performance.now();
      latencies.push(last - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, caller));
  const cpu1 = conn.cpuTimes();
  const client = process.cpuUsage(client0);
  return {
    calls: latencies.length,
    seconds: (last - start) / 1000,
    latencies,
    ...(cpu0 && cpu1 && { serverCpuMs: cpu1.processMs - cpu0.processMs, serverMainCpuMs: cpu1.mainThreadMs - cpu0.mainThreadMs }),
    clientCpuMs: (client.user + client.system) / 1000,
  };
}

export const overhead: Scenario = {
  id: 'overhead',
  title: '3. Overhead of a zero-work call',
  estimateMs: (quick) => {
    const p = params(quick);
    return SPECS.length * (p.warmupMs + p.rounds * (p.windowMs + p.pairWindowMs + p.sequentialCalls * 1.5));
  },

  async run(ctx: RunContext): Promise<ScenarioResult> {
    const p = params(ctx.quick);
    const sequential = new Map<string, number[]>(SPECS.map((s) => [specLabel(s), []]));
    const loaded = new Map<string, number[]>(SPECS.map((s) => [specLabel(s), []]));
    const windows: { server: string; round: number; concurrency: number; calls: number; seconds: number; callsPerSecond: number; serverCpuUsPerCall?: number; serverMainCpuUsPerCall?: number; clientCpuUsPerCall: number }[] = [];
    await withConnections(SPECS, async (conns) => {
      // Untimed: let both the server and this client JIT-compile their hot paths under load.
      for (const c of conns) await throughput(c, CONCURRENCY, p.warmupMs);
      ctx.progress.tick(SPECS.length * p.warmupMs);
      await alternate(conns, () => p.rounds, async (conn, round) => {
        for (let i = 0; i < 20; i++) await conn.warm(); // JIT and pool warm before timing
        for (let i = 0; i < p.sequentialCalls; i++) {
          const t0 = performance.now();
          await conn.callSpin({ ms: 0 });
          sequential.get(conn.label)!.push(us(performance.now() - t0));
        }
        for (const [concurrency, windowMs] of [[CONCURRENCY, p.windowMs], [THREADS, p.pairWindowMs]] as const) {
          const t = await throughput(conn, concurrency, windowMs);
          if (concurrency === CONCURRENCY) loaded.get(conn.label)!.push(...t.latencies.map(us));
          const perCall = (ms: number | undefined) => (ms === undefined ? undefined : Math.round((1000 * ms) / t.calls));
          windows.push({
            server: conn.label,
            round,
            concurrency,
            calls: t.calls,
            seconds: us(t.seconds),
            callsPerSecond: Math.round(t.calls / t.seconds),
            serverCpuUsPerCall: perCall(t.serverCpuMs),
            serverMainCpuUsPerCall: perCall(t.serverMainCpuMs),
            clientCpuUsPerCall: perCall(t.clientCpuMs)!,
          });
        }
        ctx.progress.tick(p.windowMs + p.pairWindowMs + p.sequentialCalls * 1.5);
      });
    });

    const labels = SPECS.map(specLabel);
    const cps = (label: string, concurrency: number = CONCURRENCY) => windows.filter((w) => w.server === label && w.concurrency === concurrency).map((w) => w.callsPerSecond);
    const rows = labels.map((label) => {
      const s = summarize(sequential.get(label)!);
      const l = summarize(loaded.get(label)!);
      const rates = cps(label);
      return [label, fmt(s.p50), fmt(s.p99), Math.round(median(rates)), `${Math.min(...rates)}–${Math.max(...rates)}`, fmt(l.p50), fmt(l.p99)];
    });
    const cpu = (label: string, concurrency: number, f: (w: (typeof windows)[number]) => number | undefined) => {
      const v = windows.filter((w) => w.server === label && w.concurrency === concurrency).map(f).filter((x): x is number => x !== undefined);
      return v.length ? Math.round(median(v)) : '–';
    };
    const cpuTable: Table = {
      title: 'Where the time goes: CPU per zero-work call (µs, medians over windows)',
      columns: ['server', 'calls in flight', 'calls/s', 'server process', 'server main thread', 'server workers', 'client process'],
      rows: labels.flatMap((label) =>
        [CONCURRENCY, THREADS].map((concurrency) => {
          const all = cpu(label, concurrency, (w) => w.serverCpuUsPerCall);
          const main = cpu(label, concurrency, (w) => w.serverMainCpuUsPerCall);
          return [label, concurrency, Math.round(median(cps(label, concurrency))), all, main, typeof all === 'number' && typeof main === 'number' ? all - main : '–', cpu(label, concurrency, (w) => w.clientCpuUsPerCall)];
        }),
      ),
      note: `With ${THREADS} calls in flight each worker gets one call at a time and sleeps between them, so every call pays for waking it; with ${CONCURRENCY} in flight a pool that queues internally hands the next call to a worker that is still awake.`,
    };
    const ours = median(cps(specLabel(SPECS[0]!)));
    const pis = median(cps(specLabel(SPECS[1]!)));
    const ratio = pairedRatio(windows, (w) => w.server === labels[0] && w.concurrency === CONCURRENCY, (w) => w.server === labels[1] && w.concurrency === CONCURRENCY, (w) => w.callsPerSecond);
    const targets: Target[] = [{ name: 'Zero-work calls per second vs (b)', goal: '≥ 0.9×', measured: `${ratio.toFixed(2)}× paired by round (medians of ${p.rounds} windows: ${Math.round(ours)} / ${Math.round(pis)} calls/s)`, met: ratio >= 0.9 }];
    const table = {
      title: `Zero-work calls: latency (ms) and throughput (${THREADS} threads, ${CONCURRENCY} calls in flight)`,
      columns: ['server', 'one at a time p50', 'one at a time p99', 'calls/s (median)', 'calls/s (range)', 'loaded p50', 'loaded p99'],
      rows,
    };
    return {
      id: this.id,
      title: this.title,
      method: [
        `Servers run with ${THREADS} worker threads ((a) runs the call on its main thread). First an untimed ${p.warmupMs / 1000} s loaded warm-up per server (JIT). Each round, per server in turn: 20 untimed warm-up calls; ${p.sequentialCalls} zero-work calls one at a time (latency = send → response at the client); then ${CONCURRENCY} concurrent callers in a closed loop for ${p.windowMs / 1000} s (calls/s = answered calls / time to the last answer, and each call's latency under that load); then, for diagnosis, ${THREADS} callers (one call per worker) for ${p.pairWindowMs / 1000} s. ${p.rounds} rounds, servers alternating. No progress token is sent.`,
        'The client is one Node process on the same 2 cores: at these rates it is a large part of the cost, the same for every server. CPU per call is read from /proc during the loaded windows (10 ms ticks): the server process (all threads), its main thread alone, and the client process.',
      ].join('\n'),
      params: { threads: THREADS, concurrency: CONCURRENCY, ...p },
      servers: SPECS.map(serverInfo),
      tables: [table, cpuTable],
      headline: { ...table, title: 'Zero-work calls', columns: ['server', 'p50 ms', 'p99 ms', 'calls/s', 'range', 'loaded p50', 'loaded p99'] },
      charts: [
        { file: 'overhead-latency-cdf', title: 'Zero-work call latency, one at a time', spec: cdfChart('Zero-work call latency, one call at a time', labels.map((label) => ({ label, values: sequential.get(label)! }))) },
        { file: 'overhead-loaded-cdf', title: `Zero-work call latency, ${CONCURRENCY} in flight`, spec: cdfChart(`Zero-work call latency, ${CONCURRENCY} calls in flight`, labels.map((label) => ({ label, values: loaded.get(label)! }))) },
        {
          file: 'overhead-throughput',
          title: 'Zero-work calls per second',
          spec: barChart('Zero-work calls per second (each bar: one window)', windows.filter((w) => w.concurrency === CONCURRENCY).map((w) => ({ group: w.server, series: `round ${w.round + 1}`, value: w.callsPerSecond })), 'calls per second', 'server'),
        },
      ],
      targets,
      samples: { sequential: Object.fromEntries(sequential), loaded: Object.fromEntries(loaded), windows },
    };
  },
};
