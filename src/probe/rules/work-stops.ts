/**
 * Rule `cancel.work-stops`: the CPU the server's process tree burns after the
 * cancel (median over the cancelled long calls, ../cancelled-call.ts) stays
 * under `--max-cpu-after-cancel-ms`. Measured from /proc (../cpu.ts); for an
 * HTTP server only with `--pid`.
 */
import { fmt, median } from '../stats.js';
import type { CancelSample, ProbeOptions, Verdict } from '../types.js';

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
  return {
    rule,
    title,
    outcome: m > options.maxCpuAfterCancelMs ? 'fail' : 'pass',
    evidence: `${m > options.maxCpuAfterCancelMs ? 'work did not stop: ' : ''}CPU in the ${options.settleMs} ms after the cancel, process tree: median ${fmt(m)} ms, max ${fmt(Math.max(...cpu))} ms; idle after median ${fmt(median(idle.filter(Number.isFinite)))} ms${busy ? `; ${busy} of ${valid.length} still busy at the end of the window` : ''}`,
  };
}
