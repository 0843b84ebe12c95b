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
import type { Busy } from '../cpu.js';
import type { CancelSample, ProbeOptions, Verdict } from '../types.js';

/** A thread of the server kept working after the cancel: runnable (on a core or queued for one, the kernel's count) at least this share of the time... */
const KEPT_RUNNABLE_SHARE = 0.6;
/** ...running at least this many ms between blocking waits: it computes, rather than waking to look at something. */
const WORKING_RUN_PER_BLOCK_MS = 5;
const pct = (x: number) => `${Math.round(x * 100)}%`;

/**
 * The busiest thread kept working. Measured under two CPU hogs at load 12:
 * the spinning fixture's thread runnable 83–100% of the time, 52 ms of CPU
 * per blocking wait (or never blocking); the same fixture stopped, answering
 * a ping every 30 ms: 36%, 0.5 ms; its garbage collector's helpers 0.01–0.03
 * ms; ours, 20 loaded runs over HTTP: up to 62% (its main thread queued
 * behind the load while it answers messages), 0.04–0.07 ms. The share alone
 * separates neither way with a margin; the CPU per blocking wait does.
 */
export const keptWorking = (busy: Busy | undefined): boolean => busy !== undefined && busy.share >= KEPT_RUNNABLE_SHARE && busy.runPerBlockMs >= WORKING_RUN_PER_BLOCK_MS;

/** The evidence for one measurement. */
export const busyPhrase = (busy: Busy) =>
  `its busiest thread runnable ${pct(busy.share)} of the time from a third of the window on (on a core or queued for one), ${Number.isFinite(busy.runPerBlockMs) ? `${fmt(busy.runPerBlockMs)} ms of CPU per blocking wait` : 'never blocking'}`;

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
  const measured = valid.flatMap((s) => (s.busyAfterCancel !== undefined ? [s.busyAfterCancel] : []));
  const kept = measured.filter(keptWorking).length;
  // Most of the cancelled calls left a thread working: the work went on.
  const stopped = m <= options.maxCpuAfterCancelMs && kept * 2 <= measured.length;
  const median2 = (f: (b: Busy) => number) => median(measured.map(f));
  const rates = measured.length ? `; ${kept} of ${measured.length} left a thread working; ${busyPhrase({ share: median2((b) => b.share), runPerBlockMs: median2((b) => b.runPerBlockMs) })} (medians)` : '';
  return {
    rule,
    title,
    outcome: stopped ? 'pass' : 'fail',
    evidence: `${stopped ? '' : 'work did not stop: '}CPU in the ${options.settleMs} ms after the cancel, process tree: median ${fmt(m)} ms, max ${fmt(Math.max(...cpu))} ms${rates}; idle after median ${fmt(median(idle.filter(Number.isFinite)))} ms${busy ? `; ${busy} of ${valid.length} still busy at the end of the window` : ''}`,
  };
}

/** One stop test, for anything cancelled: CPU in the window within the bound, and no thread of the tree kept working. */
export function stopVerdict(rule: string, title: string, cpuMs: number, busy: Busy | undefined, options: ProbeOptions): Verdict {
  const stopped = cpuMs <= options.maxCpuAfterCancelMs && !keptWorking(busy);
  const share = busy !== undefined ? `; ${busyPhrase(busy)}` : '';
  return { rule, title, outcome: stopped ? 'pass' : 'fail', evidence: `${stopped ? '' : 'work did not stop: '}${fmt(cpuMs)} ms CPU in the ${options.settleMs} ms after the cancel, process tree${share}` };
}
