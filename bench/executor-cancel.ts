/**
 * Cancel → slot-reused latency: how long after a cancel call the next job
 * actually starts running in a worker, ours (the next job starts at once on
 * the standby thread; the cancelled one stops at its next 1 ms checkpoint and
 * its thread is kept) against Piscina's own abort (thread terminated and
 * replaced), in the same process and the same run, alternating round by round.
 *
 * Method, per sample: one worker thread is busy with a long CPU spin; after a
 * random 2–10 ms a follow-up job is queued behind it and the spin is
 * cancelled. Latency = (wall-clock time at which the follow-up's code starts
 * in the worker, read there) − (wall-clock time just before the cancel call,
 * read on the main thread). Both sides read performance.timeOrigin +
 * performance.now(); a clock check (below) bounds the cross-thread error.
 *
 *   npx tsc -p . && node dist-dev/bench/executor-cancel.js [samplesPerSide=200]
 *
 * No targets of its own: the same metric over the real transport is the cancel-latency scenario's
 * (bench/scenarios/cancel-latency.ts), whose targets BENCHMARKS.md reports. This one isolates the executor,
 * in process, so a regression can be told apart from the transport's share.
 */
import { once } from 'node:events';
import { loadavg } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { Piscina } from 'piscina';
import { Executor } from '#dist/src/executor/executor.js';
import type { JobOutcome } from '#dist/src/backend/backend.js';
import type { BaselineTask } from './baseline-spin-worker.js';
// The percentiles every bench scenario and the probe use (interpolated quantiles).
import { summarize as summarizeShared, type Summary } from '#dist/src/probe/stats.js';

/** The shared summary plus the minimum, which this microbenchmark also prints. */
function summarize(xs: number[]): Summary & { min: number } {
  return { ...summarizeShared(xs), min: Math.min(...xs) };
}

const FIXTURES = new URL('../test/fixtures/failing-tools.js', import.meta.url);
const BASELINE_WORKER = new URL('./baseline-spin-worker.js', import.meta.url).href;

const SAMPLES = Number(process.argv[2] ?? 200);
const WARMUP = 10;
const LONG_SPIN_MS = 60_000;

const wall = () => performance.timeOrigin + performance.now();
const randomDelay = () => 2 + Math.random() * 8;

/**
 * Timers fire on whole-millisecond ticks of the event loop, so a timer alone
 * would land the cancel at nearly the same phase of every 1 ms stage. A
 * sub-millisecond busy-wait on top spreads the cancel uniformly over the stage.
 */
async function randomMoment(): Promise<void> {
  await delay(randomDelay());
  const until = performance.now() + Math.random();
  while (performance.now() < until) {
    /* jitter */
  }
}

const fmt = (x: number) => x.toFixed(3).padStart(9);

function structured(outcome: JobOutcome): Record<string, unknown> {
  if (outcome.kind !== 'completed') throw new Error(`follow-up job did not complete: ${JSON.stringify(outcome)}`);
  return outcome.result.structuredContent as Record<string, unknown>;
}

// ---- ours ------------------------------------------------------------------

let nextId = 0;
const anomalies: string[] = [];

async function oursSample(ex: Executor): Promise<number> {
  const spinId = ++nextId;
  const spin = ex.submit('bench', spinId, { tool: 'spin', args: { ms: LONG_SPIN_MS, stageMs: 1, cooperative: true } });
  await randomMoment();
  const follow = ex.submit('bench', ++nextId, { tool: 'quick', args: { tag: nextId } });
  if (follow.state !== 'queued') anomalies.push(`ours: follow-up was ${follow.state}, not queued`);
  const t0 = wall();
  const r = ex.tryCancel('bench', spinId);
  const at = structured(await follow.outcome).at as number;
  const spun = await spin.outcome;
  if (r !== 'cancelled-running') anomalies.push(`ours: cancel returned ${r}`);
  if (spun.kind !== 'cancelled' || spun.from !== 'running' || spun.hardKilled)
    anomalies.push(`ours: spin ended ${JSON.stringify(spun)}`);
  return at - t0;
}

// ---- Piscina's own abort ---------------------------------------------------------

async function baselineSample(pool: Piscina<BaselineTask, number>): Promise<number> {
  const doomed = pool.threads[0];
  const ac = new AbortController();
  const spin = pool.run({ op: 'spin', ms: LONG_SPIN_MS }, { signal: ac.signal }).then(
    () => 'finished',
    (e: unknown) => (e instanceof Error ? e.name : String(e)),
  );
  await randomMoment();
  const follow = pool.run({ op: 'stamp' });
  const t0 = wall();
  ac.abort();
  const at = await follow;
  const how = await spin;
  if (how !== 'AbortError') anomalies.push(`baseline: spin ended with ${how}`);
  // Let the terminated thread finish tearing down before the next sample (outside the measurement),
  // so its teardown does not steal CPU from whichever sample runs next.
  if (doomed && doomed.threadId !== -1) await Promise.race([once(doomed, 'exit'), delay(2_000)]);
  return at - t0;
}

// ---- clock check --------------------------------------------------------------

/**
 * The worker's stamp must fall between "about to submit" and "answer received"
 * on the main thread. Returns the worst violation seen (ms, 0 if none) and the
 * typical idle round trip, so the reader can judge the cross-thread clock error.
 */
interface ClockBound {
  /** The worker clock minus the main clock lies in [low, high] (ms), from the tightest send/receive windows seen. */
  low: number;
  high: number;
}

async function clockCheck(stamp: () => Promise<number>): Promise<ClockBound> {
  // stamp() ran at worker time `at`, between main times a and b, so the offset
  // (worker − main) is at least at − b and at most at − a.
  let low = -Infinity;
  let high = Infinity;
  for (let i = 0; i < 100; i++) {
    const a = wall();
    const at = await stamp();
    const b = wall();
    low = Math.max(low, at - b);
    high = Math.min(high, at - a);
  }
  return { low, high };
}
const showBound = (c: ClockBound) => `[${c.low.toFixed(3)}, ${c.high.toFixed(3)}] ms`;

// ---- main -----------------------------------------------------------------------

async function main(): Promise<void> {
  const ex = await Executor.create({ threads: 1, toolModules: [FIXTURES], graceMs: 5_000 });
  const pool = new Piscina<BaselineTask, number>({
    filename: BASELINE_WORKER,
    minThreads: 1,
    maxThreads: 1,
    concurrentTasksPerWorker: 1,
    idleTimeout: Number.POSITIVE_INFINITY,
  });

  const started = performance.now();
  const load0 = loadavg()[0]!;
  const oursStamp = async () =>
    structured(await ex.submit('clock', ++nextId, { tool: 'quick', args: {} }).outcome).at as number;
  const clockOurs = await clockCheck(oursStamp);
  for (let i = 0; i < WARMUP; i++) {
    await oursSample(ex);
    await baselineSample(pool);
  }
  anomalies.length = 0;

  const ours: number[] = [];
  const base: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    // Alternate which side goes first so neither always follows the other's teardown.
    if (i % 2 === 0) {
      ours.push(await oursSample(ex));
      base.push(await baselineSample(pool));
    } else {
      base.push(await baselineSample(pool));
      ours.push(await oursSample(ex));
    }
  }
  const elapsed = (performance.now() - started) / 1000;
  // The baseline's thread is new after every sample: check the clock of the one serving now, and ours again.
  const clockBase = await clockCheck(() => pool.run({ op: 'stamp' }));
  const clockOursEnd = await clockCheck(oursStamp);

  const o = summarize(ours);
  const b = summarize(base);
  const stats = ex.stats();
  console.log(
    `cancel → next job running in the worker (ms), ${SAMPLES} samples each, 1 thread each (ours: plus its default standby thread), 1 ms cooperative stages, ${elapsed.toFixed(1)} s`,
  );
  console.log(`                       n       min       p50       p90       p99       max      mean`);
  for (const [name, s] of [
    ['ours (cooperative)', o],
    ['piscina abort', b],
  ] as const) {
    console.log(
      `${name.padEnd(19)}${String(s.n).padStart(5)}${fmt(s.min)}${fmt(s.p50)}${fmt(s.p90)}${fmt(s.p99)}${fmt(s.max)}${fmt(s.mean)}`,
    );
  }
  console.log(`p50 ratio (piscina abort / ours): ${(b.p50 / o.p50).toFixed(1)}x`);
  console.log(
    `clock check, worker − main offset bounds: ours ${showBound(clockOurs)} before, ${showBound(clockOursEnd)} after; a fresh baseline thread ${showBound(clockBase)}`,
  );
  console.log(
    `load average (1 min) at start ${load0.toFixed(2)}, at end ${loadavg()[0]!.toFixed(2)}, on ${(await import('node:os')).availableParallelism()} CPUs`,
  );
  console.log(
    `executor: threads ${stats.threads}, hardKilled ${stats.hardKilled}, cancelled ${stats.cancelled}, completed ${stats.completed}, inFlight ${stats.inFlight}`,
  );
  // No targets of its own: the targets for this metric are the cancel-latency scenario's, measured over
  // the real transport (BENCHMARKS.md, "cancel → slot reused"). This in-process figure isolates the executor.
  console.log(`for reference only; the cancel → slot reused targets are the cancel-latency scenario's (BENCHMARKS.md)`);
  if (anomalies.length > 0) console.log(`anomalies (${anomalies.length}):\n  ${anomalies.slice(0, 20).join('\n  ')}`);

  await ex.close();
  await pool.close();
}

await main();
