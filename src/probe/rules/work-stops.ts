/**
 * Rule `cancel.work-stops`: the CPU the server's process tree burns after the
 * cancel (median over the cancelled long calls, ../cancelled-call.ts) stays
 * under `--max-cpu-after-cancel-ms`, and no thread of it stays runnable. The
 * second test is what holds on a loaded machine: a server that keeps burning
 * gets only a share of a core there, so its CPU in the window may stay under
 * the absolute bound, but its spinning thread is runnable all the time, on a
 * core or queued for one; a stopped one sleeps. Both are read from /proc
 * (../cpu.ts), the second as the kernel's run and run-queue time of each
 * thread (schedstat) between two reads, so it does not depend on how often a
 * starved probe gets to look; for an HTTP server only with `--pid`.
 */
import { fmt, median } from '../stats.js';
import type { CancelSample, ProbeOptions, Verdict } from '../types.js';

/** One thread runnable (on a core or queued for one, the kernel's count) for at least this share of the time after the cancel: the work went on. A spinning thread is runnable all the time at any load; one that sleeps between wake-ups is not. */
const KEPT_RUNNABLE_SHARE = 0.9;
const pct = (x: number) => `${Math.round(x * 100)}%`;

/** The evidence for a runnable share. */
export const runnablePhrase = (share: number) => `its busiest thread runnable ${pct(share)} of the time from a third of the window on (on a core or queued for one)`;

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
  const shares = valid.flatMap((s) => (s.runnableShareAfterCancel !== undefined ? [s.runnableShareAfterCancel] : []));
  const runnable = shares.length ? median(shares) : 0;
  const stopped = m <= options.maxCpuAfterCancelMs && runnable < KEPT_RUNNABLE_SHARE;
  const rates = shares.length ? `; ${runnablePhrase(runnable)}, median of the calls` : '';
  return {
    rule,
    title,
    outcome: stopped ? 'pass' : 'fail',
    evidence: `${stopped ? '' : 'work did not stop: '}CPU in the ${options.settleMs} ms after the cancel, process tree: median ${fmt(m)} ms, max ${fmt(Math.max(...cpu))} ms${rates}; idle after median ${fmt(median(idle.filter(Number.isFinite)))} ms${busy ? `; ${busy} of ${valid.length} still busy at the end of the window` : ''}`,
  };
}

/** One stop test, for anything cancelled: CPU in the window within the bound, and no thread of the tree runnable most of the time. */
export function stopVerdict(rule: string, title: string, cpuMs: number, runnableShare: number | undefined, options: ProbeOptions): Verdict {
  const stopped = cpuMs <= options.maxCpuAfterCancelMs && (runnableShare ?? 0) < KEPT_RUNNABLE_SHARE;
  const share = runnableShare !== undefined ? `; ${runnablePhrase(runnableShare)}` : '';
  return { rule, title, outcome: stopped ? 'pass' : 'fail', evidence: `${stopped ? '' : 'work did not stop: '}${fmt(cpuMs)} ms CPU in the ${options.settleMs} ms after the cancel, process tree${share}` };
}
