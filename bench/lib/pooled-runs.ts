/**
 * Pools several runs of scenario 3 (zero-work calls). One run's paired median
 * falls on either side of 1.0 when the true ratio is near it: on a shared VM
 * the same code gave 0.946× and 1.055× (e)'s calls/s at 32 in flight in two
 * runs six minutes apart (BENCHMARKS.md, seventeenth pass on issue 24). Pooled, the
 * runs say how far from 1.0 the ratio can be: for each of scenario 3's
 * targets, each run's paired median, their mean with a bootstrap interval
 * over runs (a run's drift is shared by all its rounds, so runs, not rounds,
 * are what is resampled), the median of every round, and the rounds that went
 * ours' way.
 *
 * The command line is bench/pool-runs.ts.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { median, pairedRatios, summarize } from '#dist/src/probe/stats.js';
import { rng } from './rng.js';
import { OVERHEAD_LABELS, type ZeroWorkWindow } from '../scenarios/overhead.js';

/** One run's windows, and the commit it ran. */
export interface OverheadRun {
  readonly commit: string;
  readonly windows: readonly ZeroWorkWindow[];
}

/** One target of scenario 3, pooled over runs. */
export interface PooledTarget {
  readonly name: string;
  readonly goal: '≥ 1.0×' | '≤ 1.0×';
  /** Each run's median over rounds of ours ÷ the baseline, in the order given. */
  readonly runMedians: readonly number[];
  /** The mean of {@link runMedians}, and its 90 % bootstrap interval over runs. */
  readonly mean: number;
  readonly interval: readonly [number, number];
  /** The median of every round's ratio, all runs together. */
  readonly pooledMedian: number;
  readonly oursWay: number;
  readonly rounds: number;
}

type Metric = (w: ZeroWorkWindow) => number | undefined;
const TARGETS: readonly { name: string; base: string; inFlight: number; metric: Metric; higherIsBetter: boolean }[] = [
  ...[1, 8, 32].map((n) => ({ name: `calls/s vs (e), ${n} in flight`, base: OVERHEAD_LABELS.coop, inFlight: n, metric: (w: ZeroWorkWindow) => w.callsPerSecond, higherIsBetter: true })),
  ...[1, 8, 32].map((n) => ({ name: `CPU per call vs (e), ${n} in flight`, base: OVERHEAD_LABELS.coop, inFlight: n, metric: (w: ZeroWorkWindow) => w.serverCpuUsPerCall, higherIsBetter: false })),
  { name: 'round trip p50 vs (b), 1 in flight', base: OVERHEAD_LABELS.naive, inFlight: 1, metric: (w) => w.p50Ms, higherIsBetter: false },
  ...[1, 8, 32].map((n) => ({ name: `calls/s vs (g), ${n} in flight`, base: OVERHEAD_LABELS.coop2, inFlight: n, metric: (w: ZeroWorkWindow) => w.callsPerSecond, higherIsBetter: true })),
  ...[1, 8, 32].map((n) => ({ name: `CPU per call vs (g), ${n} in flight`, base: OVERHEAD_LABELS.coop2, inFlight: n, metric: (w: ZeroWorkWindow) => w.serverCpuUsPerCall, higherIsBetter: false })),
];

/** Resamples `values` with replacement `times` times (seeded: the same runs give the same interval). */
function bootstrapMeans(values: readonly number[], times: number, seed: number): number[] {
  const next = rng(seed);
  const means: number[] = [];
  for (let t = 0; t < times; t++) {
    let sum = 0;
    for (let i = 0; i < values.length; i++) sum += values[Math.floor(next() * values.length)]!;
    means.push(sum / values.length);
  }
  return means.sort((a, b) => a - b);
}

/** Scenario 3's targets, pooled over `runs`. A target none of the runs measured is left out. */
export function poolRuns(runs: readonly OverheadRun[]): PooledTarget[] {
  const out: PooledTarget[] = [];
  for (const t of TARGETS) {
    const perRun = runs.map((r) =>
      pairedRatios(r.windows, (w) => w.server === OVERHEAD_LABELS.ours && w.inFlight === t.inFlight, (w) => w.server === t.base && w.inFlight === t.inFlight, (w) => t.metric(w) ?? Number.NaN).filter(Number.isFinite),
    );
    const withRounds = perRun.filter((ratios) => ratios.length > 0);
    if (withRounds.length === 0) continue;
    const runMedians = withRounds.map(median);
    const all = withRounds.flat();
    const boots = bootstrapMeans(runMedians, 4000, 24);
    out.push({
      name: t.name,
      goal: t.higherIsBetter ? '≥ 1.0×' : '≤ 1.0×',
      runMedians,
      mean: summarize(runMedians).mean,
      interval: [boots[Math.floor(0.05 * boots.length)]!, boots[Math.ceil(0.95 * boots.length) - 1]!],
      pooledMedian: median(all),
      oursWay: all.filter((x) => (t.higherIsBetter ? x > 1 : x < 1)).length,
      rounds: all.length,
    });
  }
  return out;
}

/** Reads a run: a results.json, or a `--out` directory holding one (in any run kind's subfolder) with scenario 3. */
export function readRun(path: string): OverheadRun {
  const files = path.endsWith('.json') ? [path] : [join(path, 'results.json'), ...(existsSync(path) ? readdirSync(path).map((d) => join(path, d, 'results.json')) : [])];
  for (const file of files.filter((f) => existsSync(f))) {
    let run: { env?: { gitCommit?: string }; scenarios?: { id: string; samples?: { windows?: ZeroWorkWindow[] } }[] };
    try {
      run = JSON.parse(readFileSync(file, 'utf8')) as typeof run;
    } catch (error) {
      throw new Error(`${file}: not a bench results file (${error instanceof Error ? error.message : String(error)})`);
    }
    const windows = run.scenarios?.find((s) => s.id === 'overhead')?.samples?.windows;
    if (windows) return { commit: run.env?.gitCommit?.slice(0, 7) ?? '?', windows };
  }
  throw new Error(`${path}: no results.json with scenario 3 (overhead) in it`);
}

/** The pooled targets as a Markdown table. */
export function poolTable(runs: readonly OverheadRun[]): string {
  const x = (v: number) => v.toFixed(3);
  const lines = [
    `Pooled over ${runs.length} runs (${runs.map((r) => r.commit).join(', ')}); mean of run medians with its 90 % bootstrap interval over runs.`,
    '',
    '| ours ÷ | goal | run medians | mean [90 % interval] | median of all rounds | rounds ours\' way |',
    '| --- | --- | --- | --- | --- | --- |',
    ...poolRuns(runs).map((t) => `| ${t.name} | ${t.goal} | ${t.runMedians.map(x).join(', ')} | ${x(t.mean)} [${x(t.interval[0])}, ${x(t.interval[1])}] | ${x(t.pooledMedian)} | ${t.oursWay} of ${t.rounds} |`),
  ];
  return lines.join('\n');
}
