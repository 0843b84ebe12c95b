/** The report's statistics over one server's cancelled calls and pings, each with how many values were taken and why fewer went in. */
import { summarize } from './stats.js';
import type { CancelSample, Measure, ProbeOptions } from './types.js';

/** Idle round trips the probe measures before anything runs. */
export const IDLE_PINGS = 10;

/**
 * The statistics of the report. Each over the cancelled calls says how many
 * were taken and, when fewer values went in, why: a call that ended before
 * its cancel is not a sample; a quick call unanswered has no latency; a
 * process still busy at the end of the window never fell idle.
 */
export function summariesOf(
  samples: readonly CancelSample[],
  idlePingMs: readonly number[],
  options: ProbeOptions,
): Record<string, Measure> {
  const valid = samples.filter((s) => !s.finishedBeforeCancel);
  const early = samples.length - valid.length;
  const over = (values: (number | undefined)[], missing: (count: number) => string | undefined): Measure => {
    const defined = values.filter((x): x is number => x !== undefined && Number.isFinite(x));
    const reasons = [
      early ? `${early} call(s) ended before their cancel (not samples)` : undefined,
      defined.length < valid.length ? missing(valid.length - defined.length) : undefined,
    ].filter(Boolean);
    return { ...summarize(defined), taken: samples.length, ...(reasons.length && { why: reasons.join('; ') }) };
  };
  const stillBusy = valid.filter((s) => s.idleAfterCancelMs === Number.POSITIVE_INFINITY).length;
  return {
    'cancel → next call answered': over(
      valid.map((s) => s.nextCallMs),
      (k) =>
        options.quickTool === undefined
          ? 'no --quick-tool'
          : `${k} quick call(s) unanswered within ${Math.max(options.settleMs, options.timeoutMs)} ms of the cancel`,
    ),
    'ping while the long tool runs': summarize(valid.flatMap((s) => s.pingWhileRunningMs)),
    'ping, idle': {
      ...summarize(idlePingMs),
      taken: IDLE_PINGS,
      ...(idlePingMs.length < IDLE_PINGS && {
        why: `${IDLE_PINGS - idlePingMs.length} unanswered within ${options.timeoutMs} ms`,
      }),
    },
    'CPU after cancel': over(
      valid.map((s) => s.cpuAfterCancelMs),
      (k) =>
        k === valid.length
          ? 'CPU not measurable (an HTTP server without --pid, or no /proc)'
          : `${k}: the server exited during the window`,
    ),
    'cancel → idle': over(
      valid.map((s) => s.idleAfterCancelMs),
      (k) =>
        k === stillBusy
          ? `${k} still busy at the end of the ${options.settleMs} ms window (never fell idle)`
          : `${stillBusy} still busy at the end of the ${options.settleMs} ms window; ${k - stillBusy} not measured (no CPU readings)`,
    ),
  };
}
