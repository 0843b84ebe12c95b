/**
 * Rule `cancel.work-stops`: the CPU the server's process tree burns after the
 * cancel (median over the cancelled long calls, ../cancelled-call.ts) stays
 * under `--max-cpu-after-cancel-ms`, and its rate after the cancel falls well
 * below its rate before it. The second test is what holds on a loaded
 * machine: a server that keeps burning gets only a share of a core there, so
 * its CPU in the window may stay under the absolute bound, but it burns at
 * the same rate as before the cancel. Measured from /proc (../cpu.ts); for an
 * HTTP server only with `--pid`.
 */
import { fmt, median } from '../stats.js';
import type { CancelSample, ProbeOptions, Verdict } from '../types.js';

/** Below this share of a core before the cancel the tool is not burning CPU (it sleeps or waits): only the absolute bound applies. */
const MIN_WORKING_RATE = 0.1;
/** Burning after the cancel at half the rate before it or more: the work went on. */
const KEPT_RATE_SHARE = 0.5;
const pct = (x: number) => `${Math.round(x * 100)}%`;

export function workStopsVerdict(samples: readonly CancelSample[], options: ProbeOptions, cpuMeasured: boolean): Verdict {
  const rule = 'cancel.work-stops';
  const valid = samples.filter((s) => !s.finishedBeforeCancel);
  if (!cpuMeasured) return { rule, title: 'the work stops after the cancel', outcome: 'skip', evidence: 'CPU not measurable: an HTTP server without --pid, or no /proc' };
  const title = `the work stops: at most ${options.maxCpuAfterCancelMs} ms CPU after the cancel (median)`;
  if (valid.length === 0) return { rule, title, outcome: 'skip', evidence: 'no call was still running at its cancel' };
  const cpu = valid.map((s) => s.cpuAfterCancelMs ?? 0);
  const m = median(cpu);
  const idle = valid.map((s) => s.idleAfterCancelMs ?? Number.NaN);
  const busy = idle.filter((x) => x === Number.POSITIVE_INFINITY).length;
  // Rates in share of one core: before (call → cancel) and after (the watch window).
  const before = median(valid.map((s) => (s.cpuBeforeCancelMs ?? 0) / Math.max(1, options.cancelAfterMs)));
  const after = m / options.settleMs;
  const keptRate = before >= MIN_WORKING_RATE && after >= KEPT_RATE_SHARE * before;
  const stopped = m <= options.maxCpuAfterCancelMs && !keptRate;
  const rates = before >= MIN_WORKING_RATE ? `; rate ${pct(before)} of a core before the cancel, ${pct(after)} after` : '';
  return {
    rule,
    title,
    outcome: stopped ? 'pass' : 'fail',
    evidence: `${stopped ? '' : 'work did not stop: '}CPU in the ${options.settleMs} ms after the cancel, process tree: median ${fmt(m)} ms, max ${fmt(Math.max(...cpu))} ms${rates}; idle after median ${fmt(median(idle.filter(Number.isFinite)))} ms${busy ? `; ${busy} of ${valid.length} still busy at the end of the window` : ''}`,
  };
}
