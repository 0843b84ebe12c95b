/**
 * Scenario 4: cancel storms. Two callers keep both workers busy with
 * spin(W ms, 1 ms stages); a seeded share of the calls is cancelled a random
 * 20–80 % of W after it was sent. Useful work = calls that completed. Ours
 * (with and without its standby thread) against (b) and (c); windows
 * alternate between servers, and every server sees the same sequence of
 * cancel decisions.
 */
import { barChart } from '#dist/src/probe/charts.js';
import {
  type RunContext,
  type Scenario,
  type ScenarioResult,
  type Table,
  type Target,
  serverInfo,
} from '../lib/scenario.js';
import { rng } from '../lib/rng.js';
import { Connection, specLabel, type ServerSpec, withConnections } from '../lib/servers.js';
import { alternate, median, pairedRatio, sleep } from '#dist/src/probe/stats.js';

const THREADS = 2;
/** Work per call: a 50 ms tool, and a short 5 ms one where a worker restart costs more than the work. */
const WORKS = [50, 5] as const;
const STAGE_MS = 1;
const SHARES = [0, 0.25, 0.5, 0.9] as const;

/** A cancelled call is cancelled this share of W after it was sent: uniform over [MIN, MIN + SPAN]. */
const CANCEL_AT_MIN = 0.2;
const CANCEL_AT_SPAN = 0.6;

/**
 * The most completed calls/s any server could reach here: cancellation costs
 * nothing and calls have no overhead, so a thread only loses the work a
 * cancelled call did before its cancel was sent (on average half of W).
 */
function idealPerSecond(workMs: number, share: number): number {
  const meanMsPerCall = (1 - share) * workMs + share * (CANCEL_AT_MIN + CANCEL_AT_SPAN / 2) * workMs;
  return (THREADS * (1 - share) * 1000) / meanMsPerCall;
}

const params = (quick: boolean) =>
  quick ? { rounds: 1, windowMs: 300, shares: [0.5] } : { rounds: 3, windowMs: 3000, shares: [...SHARES] };

const SPECS: readonly ServerSpec[] = [
  { kind: 'ours', transport: 'stdio', threads: THREADS },
  { kind: 'piscina-abort', transport: 'stdio', threads: THREADS },
  { kind: 'workerpool', transport: 'stdio', threads: THREADS },
  // The standby thread lets the next call start while a cancelled one winds down; on 2 cores that overlap has a price here.
  { kind: 'ours', transport: 'stdio', threads: THREADS, spareThreads: 0, tag: 'no standby' },
];

interface Window {
  server: string;
  workMs: number;
  share: number;
  round: number;
  seconds: number;
  sent: number;
  completed: number;
  cancelled: number;
  /** Completed work as a share of what the pool could have done in the window. */
  usefulUtilisation: number;
  completedPerSecond: number;
}

async function storm(
  conn: Connection,
  workMs: number,
  share: number,
  round: number,
  windowMs: number,
): Promise<Window> {
  const start = performance.now();
  const end = start + windowMs;
  let sent = 0;
  let completed = 0;
  let cancelled = 0;
  const inFlight = new Set<AbortController>();
  const caller = async (index: number) => {
    const random = rng(1_000_003 * (index + 1) + 1009 * Math.round(share * 100) + 17 * workMs + round);
    while (performance.now() < end && !conn.isLost) {
      const cancel = random() < share;
      const delay = workMs * (CANCEL_AT_MIN + CANCEL_AT_SPAN * random());
      const controller = new AbortController();
      inFlight.add(controller);
      const timer = cancel ? setTimeout(() => controller.abort(), delay) : undefined;
      sent++;
      try {
        await conn.callSpin({ ms: workMs, stageMs: STAGE_MS }, { signal: controller.signal });
        if (performance.now() <= end) completed++;
      } catch {
        if (cancel) cancelled++;
      } finally {
        clearTimeout(timer);
        inFlight.delete(controller);
      }
    }
  };
  const stopper = setTimeout(() => {
    for (const c of inFlight) c.abort(); // calls still running at the end of the window are not counted
  }, windowMs);
  await Promise.all(Array.from({ length: THREADS }, (_, i) => caller(i)));
  clearTimeout(stopper);
  const seconds = windowMs / 1000;
  // Let the server recover (replace terminated workers) before the next window.
  await sleep(50);
  await Promise.all(Array.from({ length: THREADS }, () => conn.warm()));
  return {
    server: conn.label,
    workMs,
    share,
    round,
    seconds,
    sent,
    completed,
    cancelled,
    usefulUtilisation: (completed * workMs) / (windowMs * THREADS),
    completedPerSecond: completed / seconds,
  };
}

/** Useful throughput of `server` ÷ that of `other`, paired by round (windows that ran back to back). */
function stormRatio(windows: readonly Window[], server: string, other: string, workMs: number, share: number): number {
  const at = (label: string) => (w: Window) => w.server === label && w.workMs === workMs && w.share === share;
  return pairedRatio(windows, at(server), at(other), (w) => w.completedPerSecond);
}

export const cancelStorm: Scenario = {
  id: 'storm',
  title: '4. Cancel storms: useful throughput',
  estimateMs: (quick) => {
    const p = params(quick);
    return p.rounds * WORKS.length * p.shares.length * SPECS.length * (p.windowMs + 700);
  },

  async run(ctx: RunContext): Promise<ScenarioResult> {
    const p = params(ctx.quick);
    const windows: Window[] = [];
    /** Server processes that died during a window: recorded, restarted, and the window left out. */
    const crashes: { server: string; workMs: number; share: number; round: number; stderr: string }[] = [];
    await withConnections(SPECS, async (conns) => {
      const runs = WORKS.flatMap((workMs) =>
        p.shares.flatMap((share) => SPECS.map((_, server) => ({ workMs, share, server }))),
      );
      // Rounds outermost, so every (server, work, share) window is spread over the run.
      await alternate(
        runs,
        () => p.rounds,
        async ({ workMs, share, server }, round) => {
          const conn = conns[server]!;
          try {
            windows.push(await storm(conn, workMs, share, round, p.windowMs));
          } catch (error) {
            if (!conn.isLost) throw error;
            crashes.push({ server: conn.label, workMs, share, round, stderr: conn.stderrTail });
            ctx.log(`${conn.label} crashed during the ${workMs} ms / ${share * 100} % window; restarting it`);
            await conn.close();
            const fresh = await Connection.open(conn.spec);
            await fresh.warm();
            conns[server] = fresh;
          }
          ctx.progress.tick(p.windowMs + 700);
        },
      );
    });

    const labels = SPECS.map(specLabel);
    const med = (label: string, workMs: number, share: number, f: (w: Window) => number) =>
      median(windows.filter((w) => w.server === label && w.workMs === workMs && w.share === share).map(f));
    const tables: Table[] = WORKS.map((workMs) => ({
      title: `Useful throughput under cancel storms: spin ${workMs} ms in ${STAGE_MS} ms stages, ${THREADS} threads (medians of ${p.rounds} windows of ${p.windowMs / 1000} s)`,
      columns: [
        'cancelled',
        'ideal: completed/s',
        ...labels.map((l) => `${l}: completed/s`),
        ...labels.map((l) => `${l}: useful %`),
        'ours ÷ (b), paired',
        'ours ÷ (c), paired',
        'no standby ÷ (b), paired',
        'ideal ÷ (b)',
      ],
      rows: p.shares.map((share) => {
        const cps = labels.map((l) => med(l, workMs, share, (w) => w.completedPerSecond));
        const util = labels.map((l) => med(l, workMs, share, (w) => w.usefulUtilisation));
        const paired = (server: string, other: string) => stormRatio(windows, server, other, workMs, share);
        const ideal = idealPerSecond(workMs, share);
        return [
          `${share * 100} %`,
          ideal.toFixed(1),
          ...cps.map((v) => v.toFixed(1)),
          ...util.map((v) => `${(v * 100).toFixed(0)} %`),
          `${paired(labels[0]!, labels[1]!).toFixed(2)}×`,
          `${paired(labels[0]!, labels[2]!).toFixed(2)}×`,
          `${paired(labels[3]!, labels[1]!).toFixed(2)}×`,
          `${(ideal / cps[1]!).toFixed(2)}×`,
        ];
      }),
      ...(crashes.length > 0 && {
        note: `Server crashes (process gone; restarted, window not counted): ${crashes.map((c) => `${c.server} at ${c.workMs} ms / ${c.share * 100} % round ${c.round + 1}: \`${(/Assertion failed: .*|Error: .*/.exec(c.stderr)?.[0] ?? c.stderr.trim().split('\n').pop() ?? '').trim()}\``).join('; ')}. Full stderr in results.json.`,
      }),
    }));
    const targets: Target[] = WORKS.flatMap((workMs) => {
      const ours = med(labels[0]!, workMs, 0.5, (w) => w.completedPerSecond);
      const pis = med(labels[1]!, workMs, 0.5, (w) => w.completedPerSecond);
      const strict = med(labels[3]!, workMs, 0.5, (w) => w.completedPerSecond);
      const ratio = stormRatio(windows, labels[0]!, labels[1]!, workMs, 0.5);
      const strictRatio = stormRatio(windows, labels[3]!, labels[1]!, workMs, 0.5);
      const ceiling = idealPerSecond(workMs, 0.5) / pis;
      return [
        {
          name: `50 % cancel storm (${workMs} ms calls): useful throughput vs (b)`,
          goal: '≥ 3×',
          measured: `${ratio.toFixed(2)}× paired by round (medians: ${ours.toFixed(1)} / ${pis.toFixed(1)} completed calls/s; a server with free cancellation and no overhead would reach ${ceiling.toFixed(2)}×)`,
          met: ratio >= 3,
        },
        {
          name: `The same (${workMs} ms calls) with \`--spare-threads 0\` (for comparison: no standby thread)`,
          goal: '≥ 3×',
          measured: `${strictRatio.toFixed(2)}× (median ${strict.toFixed(1)} completed calls/s)`,
          met: strictRatio >= 3,
        },
      ];
    });
    const shortWork = Math.min(...WORKS);
    const zeroCancelShares =
      labels
        .map(
          (l) =>
            `${((100 * med(l, shortWork, 0, (w) => w.completedPerSecond)) / idealPerSecond(shortWork, 0)).toFixed(0)} %`,
        )
        .join(', ') + ` (${labels.join(', ')})`;
    return {
      id: this.id,
      title: this.title,
      method: [
        `Servers run with ${THREADS} worker threads (ours also with its default standby thread; "no standby" runs \`--spare-threads 0\`). ${THREADS} callers each keep one call in flight: spin(W ms, ${STAGE_MS} ms stages) with W = ${WORKS.join(' and ')} ms; when a call ends (answered, or cancelled by the client) the caller sends the next at once. A seeded share of the calls is cancelled 20–80 % of W after it was sent (the SDK client aborts it). Windows of ${p.windowMs / 1000} s; calls still running when a window ends are cancelled and not counted; the server is given time to recover (replace workers) before the next window.`,
        `**Ideal** = what a server with free cancellation and zero per-call overhead would complete: each thread still loses the work a cancelled call did before its cancellation was sent (${CANCEL_AT_MIN * 100 + (CANCEL_AT_SPAN * 100) / 2} % of W on average), so ideal ÷ (b) is the highest ratio to (b) that any server can show in this scenario.`,
        `**Useful throughput** = calls completed within the window per second; **useful %** = completed work (W per call) ÷ (window × ${THREADS} threads). Ratios are paired: the median over rounds of ours ÷ baseline in the same round (windows that ran back to back), which drifts less with the machine's load than a ratio of medians.`,
        `With no cancellations at ${shortWork} ms, the servers reach ${zeroCancelShares} of the ideal: each call waits for a round trip through the client (response read, next request sent) while its thread idles, and the client, the server's main thread and the busy workers share ${THREADS} cores.`,
        'The cancel delay is counted from sending, as a user would: if a baseline is still replacing a worker, the call may be cancelled while it waits in the queue, which costs that baseline nothing (it favours the baselines).',
      ].join('\n'),
      params: { threads: THREADS, workMs: WORKS, stageMs: STAGE_MS, ...p },
      servers: SPECS.map(serverInfo),
      tables,
      headline: {
        title: 'Cancel storms: completed calls/s (medians)',
        columns: ['work', 'cancelled', 'ideal', ...labels],
        rows: WORKS.flatMap((workMs, i) =>
          tables[i]!.rows.map((r) => [`${workMs} ms`, ...r.slice(0, 2 + labels.length)]),
        ),
      },
      charts: WORKS.map((workMs) => ({
        file: `storm-throughput-${workMs}ms`,
        title: `Useful throughput under cancel storms, ${workMs} ms calls`,
        spec: barChart(
          `Completed calls per second (spin ${workMs} ms, ${THREADS} threads, medians)`,
          p.shares.flatMap((share) => [
            {
              group: `${share * 100} % cancelled`,
              series: 'ideal (free cancellation)',
              value: idealPerSecond(workMs, share),
            },
            ...labels.map((l) => ({
              group: `${share * 100} % cancelled`,
              series: l,
              value: med(l, workMs, share, (w) => w.completedPerSecond),
            })),
          ]),
          'completed calls / s',
          'share of calls cancelled mid-run',
        ),
      })),
      targets,
      samples: { windows, crashes },
    };
  },
};
