/**
 * Scenario 3b: the cost of a zero-work call, ours against (e) and (g), with
 * both servers running at the same time on one core. Scenario 3 measures
 * each server alone, in turn; on a VM whose speed drifts by a third within
 * minutes its four rounds do not separate servers a few per cent apart
 * (BENCHMARKS.md, eleventh pass on issue 24). Here each window drives ours
 * and one baseline at once, so both see the same moments of the machine, and
 * the ratio of their CPU per call is taken window by window. Calls/s is
 * reported but is no measure of cost here: a server that waits more for its
 * own wake-ups gets less of the shared core than its CPU per call would give it.
 */
import {
  type RunContext,
  type Scenario,
  type ScenarioResult,
  type Table,
  type Target,
  serverInfo,
} from '../lib/scenario.js';
import { type ServerSpec } from '../lib/servers.js';
import { pinSelf, type RawConnection } from '../lib/raw-client.js';
import { median } from '#dist/src/probe/stats.js';
import {
  CLIENT_CPU,
  openAndWarm,
  SERVER_CPU,
  THREADS,
  throughput,
  zeroWorkParams,
  type ZeroWorkParams,
} from '../lib/zero-work.js';

const IN_FLIGHT = [8, 32] as const;

const params = (quick: boolean): ZeroWorkParams => zeroWorkParams(quick, 6, 3000);

const OURS_SPEC: ServerSpec = { kind: 'ours', transport: 'stdio', threads: THREADS };
/** (e): the minimal cooperative design on SDK 1.32; (g): the same on the SDK 2.x line ours stands on. */
const BASELINES: readonly ServerSpec[] = [
  { kind: 'piscina-coop', transport: 'stdio', threads: THREADS },
  { kind: 'sdk2-coop', transport: 'stdio', threads: THREADS },
];
const NAMES = ['(e)', '(g)'] as const;

/** One window: ours and one baseline at once. */
interface PairWindow {
  baseline: string;
  round: number;
  inFlight: number;
  ours: { calls: number; callsPerSecond: number; cpuUsPerCall: number; mainCpuUsPerCall: number };
  other: { calls: number; callsPerSecond: number; cpuUsPerCall: number; mainCpuUsPerCall: number };
}

type Measured = Awaited<ReturnType<typeof throughput>>;

/** One side of a window, per call; NaN where /proc could not be read. */
function perCall(t: Measured): PairWindow['ours'] {
  const each = (ms: number | undefined) =>
    ms === undefined || t.calls === 0 ? Number.NaN : Math.round((ms * 10_000) / t.calls) / 10;
  return {
    calls: t.calls,
    callsPerSecond: Math.round(t.calls / t.seconds),
    cpuUsPerCall: each(t.serverCpuMs),
    mainCpuUsPerCall: each(t.serverMainCpuMs),
  };
}

export const overheadPaired: Scenario = {
  id: 'overhead-paired',
  title: '3b. Overhead of a zero-work call, both servers at once',
  estimateMs: (quick) => {
    const p = params(quick);
    return (BASELINES.length + 1) * p.warmupMs + p.rounds * BASELINES.length * IN_FLIGHT.length * p.windowMs + 3000;
  },

  async run(ctx: RunContext): Promise<ScenarioResult> {
    const p = params(ctx.quick);
    const windows: PairWindow[] = [];
    const restore = ctx.unpinned ? undefined : await pinSelf(CLIENT_CPU);
    const pinned = restore !== undefined;
    const conns: RawConnection[] = [];
    try {
      await openAndWarm([OURS_SPEC, ...BASELINES], pinned ? SERVER_CPU : undefined, p, conns);
      ctx.progress.tick((BASELINES.length + 1) * p.warmupMs);
      const [ours, ...others] = conns as [RawConnection, ...RawConnection[]];
      for (let round = 0; round < p.rounds; round++) {
        for (const [i, other] of others.entries()) {
          for (const inFlight of IN_FLIGHT) {
            // Which loop starts first alternates, though both start in the same turn.
            const [a, b] = round % 2 === 0 ? [ours, other] : [other, ours];
            const [ta, tb] = await Promise.all([
              throughput(a, inFlight, p.windowMs),
              throughput(b, inFlight, p.windowMs),
            ]);
            const [t, u] = round % 2 === 0 ? [ta, tb] : [tb, ta];
            windows.push({ baseline: NAMES[i]!, round, inFlight, ours: perCall(t), other: perCall(u) });
            ctx.progress.tick(p.windowMs);
          }
        }
      }
    } finally {
      await Promise.all(conns.map((c) => c.close()));
      if (restore !== undefined) await pinSelf(restore);
    }

    const of = (name: string, inFlight: number) =>
      windows.filter((w) => w.baseline === name && w.inFlight === inFlight);
    const ratios = (name: string, inFlight: number, f: (side: PairWindow['ours']) => number) =>
      of(name, inFlight)
        .map((w) => f(w.ours) / f(w.other))
        .filter(Number.isFinite);
    const x = (v: number) => (Number.isFinite(v) ? `${v.toFixed(3)}×` : '–');
    const span = (v: number[]) => (v.length ? `${x(Math.min(...v))}–${x(Math.max(...v))}` : '–');
    const med = (v: number[]) => (v.length ? median(v) : Number.NaN);
    const one = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : '–');

    const rows = NAMES.flatMap((name) =>
      IN_FLIGHT.map((n) => {
        const cpu = ratios(name, n, (s) => s.cpuUsPerCall);
        const main = ratios(name, n, (s) => s.mainCpuUsPerCall);
        const w = of(name, n);
        return [
          name,
          n,
          x(med(cpu)),
          span(cpu),
          x(med(main)),
          one(med(w.map((v) => v.ours.cpuUsPerCall))),
          one(med(w.map((v) => v.other.cpuUsPerCall))),
          Math.round(med(w.map((v) => v.ours.callsPerSecond))),
          Math.round(med(w.map((v) => v.other.callsPerSecond))),
        ];
      }),
    );
    const table: Table = {
      title: `Zero-work calls, ours and a baseline at once: ours ÷ baseline, CPU per call, ${THREADS} threads, ${p.rounds} windows`,
      columns: [
        'baseline',
        'in flight',
        'ours ÷ it, CPU per call (median)',
        'range',
        'main thread (median)',
        'ours CPU µs/call',
        'its CPU µs/call',
        'ours calls/s',
        'its calls/s',
      ],
      rows,
      note: pinned
        ? `Client on CPU ${CLIENT_CPU}, both servers of a pair on CPU ${SERVER_CPU} (taskset).`
        : 'Unpinned: the client and the servers run where the OS puts them.',
    };
    const targets: Target[] = NAMES.flatMap((name) =>
      IN_FLIGHT.map((n): Target => {
        const cpu = ratios(name, n, (s) => s.cpuUsPerCall);
        const r = med(cpu);
        return {
          name: `Server CPU per zero-work call vs ${name}, ${n} in flight, both at once`,
          goal: '≤ 1.0×',
          measured: `${x(r)} (median of ${cpu.length}; ${span(cpu)})`,
          met: r <= 1,
        };
      }),
    );
    return {
      id: this.id,
      title: this.title,
      method: [
        `Ours and (e), then ours and (g), each with ${THREADS} worker threads, run at the same time${pinned ? ` on CPU ${SERVER_CPU}, this client on CPU ${CLIENT_CPU}` : ''}: in each window of ${p.windowMs / 1000} s a raw JSON-RPC client drives both closed loops at once (${IN_FLIGHT.join(' and ')} callers each), so the machine's speed at that moment is the same for both. First an untimed warm-up per server alone at 32 in flight: ${p.warmupMs / 1000} s and at least ${p.warmupCalls} calls. ${p.rounds} rounds; which loop starts first alternates.`,
        "CPU per call is read from /proc for each server over its window (10 ms ticks). The ratio is taken window by window; the table gives its median and range. The two servers share the core and its caches, so each one's absolute figures are higher than alone.",
      ].join('\n'),
      params: { threads: THREADS, inFlight: IN_FLIGHT, pinned, ...p },
      servers: [OURS_SPEC, ...BASELINES].map(serverInfo),
      tables: [table],
      headline: {
        ...table,
        title: 'Zero-work calls, both at once',
        columns: [
          'baseline',
          'in flight',
          'ours ÷ it, CPU',
          'range',
          'main',
          'ours µs',
          'its µs',
          'ours calls/s',
          'its calls/s',
        ],
      },
      charts: [],
      targets,
      samples: { windows },
    };
  },
};
