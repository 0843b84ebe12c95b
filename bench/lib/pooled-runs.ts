/**
 * Pools several runs of the zero-work and HTTP scenarios. One run's paired
 * median falls on either side of 1.0 when the true ratio is near it: on a
 * shared VM the same code gave 0.946× and 1.055× (e)'s calls/s at 32 in
 * flight in two runs six minutes apart (BENCHMARKS.md, seventeenth pass on
 * issue 24). Pooled, the runs say how far from the goal the ratio can be:
 * for each target, each run's median (of its paired rounds: scenarios 3 and
 * 8; or its one figure: scenarios 9 and 10), their mean with a bootstrap
 * interval over runs (a run's drift is shared by all its rounds, so runs,
 * not rounds, are what is resampled), the median of every round, the rounds
 * that went ours' way, and a verdict: "level" where the interval still
 * contains the goal's threshold, else met or missed by the mean's side.
 *
 * The command line is bench/pool-runs.ts.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { median, pairedRatios, summarize } from '#dist/src/probe/stats.js';
import { rng } from './rng.js';
import { OVERHEAD_LABELS, type ZeroWorkWindow } from '../scenarios/overhead.js';
import { HTTP_BASELINES, HTTP_CLIENTS, HTTP_LABELS, type HttpWindow } from '../scenarios/http-overhead.js';
import type { HttpCancelSample } from '../scenarios/http-cancel.js';
import type { MemoryFigures } from '../scenarios/http-memory.js';

/** One run: the commit it ran and what it holds of the pooled scenarios. */
export interface BenchRun {
  readonly commit: string;
  /** Scenario 3 (overhead): its windows. */
  readonly windows?: readonly ZeroWorkWindow[];
  /** Scenario 8 (http-overhead): its windows. */
  readonly httpWindows?: readonly HttpWindow[];
  /** Scenario 9 (http-cancel): its samples. */
  readonly httpCancel?: readonly HttpCancelSample[];
  /** Scenario 10 (http-memory): each server's figures. */
  readonly httpMemory?: readonly MemoryFigures[];
}

/** Whether a target is met by the pooled runs: "level" while the 90 % interval contains the goal's threshold. */
export type Verdict = 'met' | 'level' | 'missed';

/** One target, pooled over runs. */
export interface PooledTarget {
  readonly name: string;
  /** E.g. `≥ 1.0×`, `≤ 1.0×`, `≥ 25×`. */
  readonly goal: string;
  /** Each run's median over rounds (or its one figure), in the order given. */
  readonly runMedians: readonly number[];
  /** The mean of {@link runMedians}, and its 90 % bootstrap interval over runs. */
  readonly mean: number;
  readonly interval: readonly [number, number];
  /** The median of every round's ratio, all runs together. */
  readonly pooledMedian: number;
  readonly oursWay: number;
  readonly rounds: number;
  readonly verdict: Verdict;
}

interface TargetDef {
  readonly name: string;
  readonly threshold: number;
  readonly higherIsBetter: boolean;
  /** This run's ratios, one per round (one in all for a scenario without rounds); none when the run lacks the scenario. */
  readonly ratios: (run: BenchRun) => number[];
}

const finite = (v: number[]) => v.filter(Number.isFinite);

/** Scenario 3: ours ÷ a baseline, paired by round, at one load. */
function overheadTarget(
  name: string,
  base: string,
  inFlight: number,
  metric: (w: ZeroWorkWindow) => number | undefined,
  higherIsBetter: boolean,
): TargetDef {
  return {
    name,
    threshold: 1,
    higherIsBetter,
    ratios: (r) =>
      finite(
        pairedRatios(
          r.windows ?? [],
          (w) => w.server === OVERHEAD_LABELS.ours && w.inFlight === inFlight,
          (w) => w.server === base && w.inFlight === inFlight,
          (w) => metric(w) ?? Number.NaN,
        ),
      ),
  };
}

/** Scenario 8: ours ÷ a baseline, paired by round, in one era at one load. */
function httpTarget(
  name: string,
  base: string,
  era: string,
  clients: number,
  metric: (w: HttpWindow) => number | undefined,
  higherIsBetter: boolean,
): TargetDef {
  const pick = (label: string) => (w: HttpWindow) => w.server === label && w.era === era && w.clients === clients;
  return {
    name,
    threshold: 1,
    higherIsBetter,
    ratios: (r) =>
      finite(pairedRatios(r.httpWindows ?? [], pick(HTTP_LABELS.ours), pick(base), (w) => metric(w) ?? Number.NaN)),
  };
}

/** Scenario 9: a baseline's cancel → slot reused p50 ÷ ours', one figure per run. */
function cancelTarget(name: string, base: string, era: string, threshold: number): TargetDef {
  const p50 = (samples: readonly HttpCancelSample[], row: string) =>
    summarize(samples.filter((s) => s.row === row && s.mode === 'reused').map((s) => s.ms)).p50;
  return {
    name,
    threshold,
    higherIsBetter: true,
    ratios: (r) =>
      r.httpCancel ? finite([p50(r.httpCancel, `${base}-${era}`) / p50(r.httpCancel, `ours-${era}`)]) : [],
  };
}

/** Scenario 10: ours ÷ a baseline, KiB per idle session or per call in flight, one figure per run. */
function memoryTarget(name: string, base: string, figure: (f: MemoryFigures) => number | undefined): TargetDef {
  return {
    name,
    threshold: 1,
    higherIsBetter: false,
    ratios: (r) => {
      const ours = r.httpMemory?.find((f) => f.server === HTTP_LABELS.ours);
      const other = r.httpMemory?.find((f) => f.server === base);
      const [a, b] = [ours && figure(ours), other && figure(other)];
      // A figure not above 0 is within the RSS noise (a collection between the reads): no ratio.
      return a !== undefined && b !== undefined && a > 0 && b > 0 ? finite([a / b]) : [];
    },
  };
}

const clientsName = (n: number) => `${n} client${n === 1 ? '' : 's'}`;

const TARGETS: readonly TargetDef[] = [
  ...[1, 8, 32].map((n) =>
    overheadTarget(`calls/s vs (e), ${n} in flight`, OVERHEAD_LABELS.coop, n, (w) => w.callsPerSecond, true),
  ),
  ...[1, 8, 32].map((n) =>
    overheadTarget(`CPU per call vs (e), ${n} in flight`, OVERHEAD_LABELS.coop, n, (w) => w.serverCpuUsPerCall, false),
  ),
  overheadTarget('round trip p50 vs (b), 1 in flight', OVERHEAD_LABELS.naive, 1, (w) => w.p50Ms, false),
  ...[1, 8, 32].map((n) =>
    overheadTarget(`calls/s vs (g), ${n} in flight`, OVERHEAD_LABELS.coop2, n, (w) => w.callsPerSecond, true),
  ),
  ...[1, 8, 32].map((n) =>
    overheadTarget(`CPU per call vs (g), ${n} in flight`, OVERHEAD_LABELS.coop2, n, (w) => w.serverCpuUsPerCall, false),
  ),
  ...['2026', '2025'].flatMap((era) =>
    HTTP_BASELINES.filter((b) => b.eras.includes(era as '2025' | '2026')).flatMap((b) => [
      ...HTTP_CLIENTS.map((n) =>
        httpTarget(
          `HTTP ${era} calls/s vs ${b.name}, ${clientsName(n)}`,
          b.label,
          era,
          n,
          (w) => w.callsPerSecond,
          true,
        ),
      ),
      ...HTTP_CLIENTS.map((n) =>
        httpTarget(
          `HTTP ${era} CPU per call vs ${b.name}, ${clientsName(n)}`,
          b.label,
          era,
          n,
          (w) => w.serverCpuUsPerCall,
          false,
        ),
      ),
      httpTarget(`HTTP ${era} idle round trip p50 vs ${b.name}, 1 client`, b.label, era, 1, (w) => w.p50Ms, false),
    ]),
  ),
  cancelTarget('HTTP 2026 cancel → slot reused p50, (f) ÷ ours (closed stream)', 'f', '2026', 25),
  ...HTTP_BASELINES.flatMap((b) => [
    memoryTarget(`HTTP RSS per idle 2025 session vs ${b.name}`, b.label, (f) => f.sessions?.perSessionKb),
    memoryTarget(`HTTP RSS per call in flight vs ${b.name}`, b.label, (f) => f.inFlight?.perCallKb),
  ]),
];

/** "level" while `interval` contains `threshold`; else met when `mean` is on the goal's side. */
export function verdict(
  mean: number,
  interval: readonly [number, number],
  threshold: number,
  higherIsBetter: boolean,
): Verdict {
  if (interval[0] <= threshold && threshold <= interval[1]) return 'level';
  return (higherIsBetter ? mean >= threshold : mean <= threshold) ? 'met' : 'missed';
}

const goalOf = (t: TargetDef) =>
  `${t.higherIsBetter ? '≥' : '≤'} ${Number.isInteger(t.threshold) && t.threshold !== 1 ? t.threshold : t.threshold.toFixed(1)}×`;

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

/** Every target, pooled over `runs`. A target none of the runs measured is left out. */
export function poolRuns(runs: readonly BenchRun[]): PooledTarget[] {
  const out: PooledTarget[] = [];
  for (const t of TARGETS) {
    const withRounds = runs.map(t.ratios).filter((ratios) => ratios.length > 0);
    if (withRounds.length === 0) continue;
    const runMedians = withRounds.map(median);
    const all = withRounds.flat();
    const boots = bootstrapMeans(runMedians, 4000, 24);
    const mean = summarize(runMedians).mean;
    const interval: [number, number] = [
      boots[Math.floor(0.05 * boots.length)]!,
      boots[Math.ceil(0.95 * boots.length) - 1]!,
    ];
    out.push({
      name: t.name,
      goal: goalOf(t),
      runMedians,
      mean,
      interval,
      pooledMedian: median(all),
      oursWay: all.filter((x) => (t.higherIsBetter ? x > t.threshold : x < t.threshold)).length,
      rounds: all.length,
      verdict: verdict(mean, interval, t.threshold, t.higherIsBetter),
    });
  }
  return out;
}

/** The scenarios a run is read for, and where each keeps what is pooled. */
const POOLED = ['overhead', 'http-overhead', 'http-cancel', 'http-memory'] as const;

/**
 * Reads a run: a results.json, or a `--out` directory holding one or more
 * (in any run kind's subfolder), with scenario 3 or 8–10 in them; a scenario
 * found in two files is taken from the first.
 */
export function readRun(path: string): BenchRun {
  const files = path.endsWith('.json')
    ? [path]
    : [
        join(path, 'results.json'),
        ...(existsSync(path) ? readdirSync(path).map((d) => join(path, d, 'results.json')) : []),
      ];
  let commit: string | undefined;
  const found = new Map<string, Record<string, unknown>>();
  for (const file of files.filter((f) => existsSync(f))) {
    let run: { env?: { gitCommit?: string }; scenarios?: { id: string; samples?: Record<string, unknown> }[] };
    try {
      run = JSON.parse(readFileSync(file, 'utf8')) as typeof run;
    } catch (error) {
      throw new Error(`${file}: not a bench results file (${error instanceof Error ? error.message : String(error)})`, {
        cause: error,
      });
    }
    for (const s of run.scenarios ?? []) {
      if (!(POOLED as readonly string[]).includes(s.id) || found.has(s.id) || !s.samples) continue;
      found.set(s.id, s.samples);
      commit ??= run.env?.gitCommit?.slice(0, 7) ?? '?';
    }
  }
  if (found.size === 0)
    throw new Error(
      `${path}: no results.json with scenario 3 (overhead) or 8–10 (http-overhead, http-cancel, http-memory) in it`,
    );
  return {
    commit: commit ?? '?',
    ...(found.has('overhead') && { windows: found.get('overhead')!.windows as ZeroWorkWindow[] }),
    ...(found.has('http-overhead') && { httpWindows: found.get('http-overhead')!.windows as HttpWindow[] }),
    ...(found.has('http-cancel') && { httpCancel: found.get('http-cancel')!.samples as HttpCancelSample[] }),
    ...(found.has('http-memory') && { httpMemory: found.get('http-memory')!.figures as MemoryFigures[] }),
  };
}

/** The pooled targets as a Markdown table. */
export function poolTable(runs: readonly BenchRun[]): string {
  const x = (v: number) => v.toFixed(3);
  const lines = [
    `Pooled over ${runs.length} runs (${runs.map((r) => r.commit).join(', ')}); mean of run medians with its 90 % bootstrap interval over runs; "level" where the interval contains the goal.`,
    '',
    "| ours ÷ (unless named) | goal | run medians | mean [90 % interval] | median of all rounds | rounds ours' way | verdict |",
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...poolRuns(runs).map(
      (t) =>
        `| ${t.name} | ${t.goal} | ${t.runMedians.map(x).join(', ')} | ${x(t.mean)} [${x(t.interval[0])}, ${x(t.interval[1])}] | ${x(t.pooledMedian)} | ${t.oursWay} of ${t.rounds} | ${t.verdict} |`,
    ),
  ];
  return lines.join('\n');
}
