/**
 * Rule `cancel.work-stops`: the work of a cancelled call stops. It weighs all
 * the evidence the probe holds, in this order:
 * 1. Anything the server sent for the call after it had read the cancel
 *    (../after-cancel.ts: an answer, progress, a log, a request to the
 *    client) means the work went on: FAIL, the messages quoted. This is the
 *    only proof for a tool that waits (sleeps, I/O) rather than computes.
 * 2. Else CPU (../cancelled-call.ts, read from /proc, for an HTTP server only
 *    with `--pid`): the process tree's CPU after the cancel (median over the
 *    cancelled calls) over `--max-cpu-after-cancel-ms`, or a thread that
 *    kept computing after most of them: FAIL. The second test is what holds
 *    on a loaded machine: a server that keeps burning gets only a share of a
 *    core there, so its CPU in the window may stay under the bound, but its
 *    computing thread is runnable all the time, on a core or queued for one,
 *    and rarely blocks; a stopped one sleeps. Read as the kernel's run and
 *    run-queue time of each thread (schedstat) between two reads, so it does
 *    not depend on how often a starved probe gets to look.
 * 3. Low CPU is a PASS only when CPU could have shown the work: an
 *    uncancelled call of the same tool (../uncancelled-call.ts) kept at least
 *    a quarter of a core busy. Else INCONCLUSIVE: a waiting tool that goes on
 *    looks the same as one that stopped.
 */
import { fmt, median } from '../stats.js';
import type { Busy } from '../cpu.js';
import type { AfterCancelMessage, CancelSample, ProbeOptions, UncancelledCall, Verdict } from '../types.js';

/** A thread of the server kept working after the cancel: runnable (on a core or queued for one, the kernel's count) at least this share of the time... */
const KEPT_RUNNABLE_SHARE = 0.6;
/** ...running at least this many ms between blocking waits: it computes, rather than waking to look at something. */
export const WORKING_RUN_PER_BLOCK_MS = 5;
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
export const keptWorking = (busy: Busy | undefined): boolean =>
  busy !== undefined && busy.share >= KEPT_RUNNABLE_SHARE && busy.runPerBlockMs >= WORKING_RUN_PER_BLOCK_MS;

/** How busy a thread was, for a tool author: the share of the time it was runnable, and how long it computed between waits. */
export const busyPhrase = (busy: Busy) =>
  `runnable (running or waiting for a core) ${pct(busy.share)} of the time, ${Number.isFinite(busy.runPerBlockMs) ? `${fmt(busy.runPerBlockMs)} ms of CPU between waits` : 'never waiting'}`;

const NAMES: Record<AfterCancelMessage['kind'], string> = {
  answer: 'an answer',
  progress: 'progress',
  log: 'a log message',
  request: 'a request to the client',
};
const list = (xs: readonly string[]) =>
  xs.length <= 1 ? (xs[0] ?? '') : `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}`;

/** The messages that prove the work went on, quoted: what, for how many calls, the first and the last. */
function wentOnEvidence(went: readonly CancelSample[], valid: number, markers: number): string {
  const all = went.flatMap((s) => s.afterCancel);
  const kinds = list([...new Set(all.map((m) => m.kind))].map((k) => NAMES[k]));
  const first = all.reduce((a, b) => (b.afterCancelMs < a.afterCancelMs ? b : a));
  const last = all.reduce((a, b) => (b.afterCancelMs > a.afterCancelMs ? b : a));
  const quote = (m: AfterCancelMessage) =>
    `${fmt(m.afterCancelMs)} ms after the cancel, ${NAMES[m.kind]}: ${m.excerpt}`;
  return (
    `The work went on after the cancel: the server sent ${kinds} for ${went.length} of ${valid} cancelled calls after it had read the cancel (it had already answered the ${markers} marker request(s) sent behind it). ` +
    `${all.length} message(s); first ${quote(first)}${last !== first ? `; last ${quote(last)}` : ''}.`
  );
}

/** The `cancel.work-stops` verdict over the cancelled calls (their messages after the cancel filled in), with the uncancelled call where CPU was measured. */
export function workStopsVerdict(
  samples: readonly CancelSample[],
  options: ProbeOptions,
  cpuMeasured: boolean,
  uncancelled?: UncancelledCall,
): Verdict {
  const rule = 'cancel.work-stops';
  const title = 'the work stops after the cancel: nothing more is sent for the call, and CPU shows it stopped';
  const valid = samples.filter((s) => !s.finishedBeforeCancel);
  if (valid.length === 0) return { rule, title, outcome: 'skip', evidence: 'no call was still running at its cancel' };
  const unordered = valid.filter((s) => s.markersDoneAt === undefined).length;
  const unorderedNote = unordered
    ? ` ${unordered} of ${valid.length} cancelled calls could not be checked for messages: the marker requests behind their cancel went unanswered.`
    : '';
  const went = valid.filter((s) => s.afterCancel.length > 0);
  const cpuPart = cpuMeasured ? ` ${measuredPhrase(valid, options)}` : '';
  if (went.length)
    return {
      rule,
      title,
      outcome: 'fail',
      evidence: `${wentOnEvidence(went, valid.length, options.markers)}${cpuPart}`,
    };
  const quiet = `nothing arrived for the ${valid.length} cancelled calls after the server had read the cancel`;
  if (!cpuMeasured)
    return {
      rule,
      title,
      outcome: 'skip',
      evidence: `Cannot tell whether the work stopped: ${quiet}, and CPU is not measurable (an HTTP server without --pid, or no /proc).${unorderedNote}`,
    };
  const cpu = valid.map((s) => s.cpuAfterCancelMs ?? 0);
  const m = median(cpu);
  const measured = valid.flatMap((s) => (s.busyAfterCancel !== undefined ? [s.busyAfterCancel] : []));
  const kept = measured.filter(keptWorking).length;
  // Most of the cancelled calls left a thread working: the work went on.
  if (m > options.maxCpuAfterCancelMs || kept * 2 > measured.length) {
    const why =
      m > options.maxCpuAfterCancelMs
        ? `the server kept using CPU (median ${fmt(m)} ms in the ${options.settleMs} ms after each cancel, over the ${options.maxCpuAfterCancelMs} ms limit)`
        : `a thread of the server kept computing after ${kept} of ${measured.length} cancelled calls`;
    return {
      rule,
      title,
      outcome: 'fail',
      evidence: `The work went on after the cancel: ${why}.${cpuPart}${unorderedNote}`,
    };
  }
  const base = uncancelled ? uncancelledPhrase(uncancelled) : 'no uncancelled call was measured';
  if (!uncancelled?.cpuCanTell) {
    return {
      rule,
      title,
      outcome: 'inconclusive',
      evidence:
        `Cannot tell whether the work stopped: ${quiet}, but the tool uses too little CPU for CPU to show it (${base}; CPU tells from a quarter of a core on). ` +
        `A tool that waits (sleeps, I/O, another service) looks the same whether it goes on or stopped: have it send progress while it works, or probe a tool that computes.${cpuPart}${unorderedNote}`,
    };
  }
  return {
    rule,
    title,
    outcome: 'pass',
    evidence: `The work stopped: ${quiet}, the server's CPU fell and no thread kept computing, and CPU would have shown work that went on (${base}).${cpuPart}${unorderedNote}`,
  };
}

/** The CPU numbers behind a verdict, after its sentence. */
function measuredPhrase(valid: readonly CancelSample[], options: ProbeOptions): string {
  const cpu = valid.map((s) => s.cpuAfterCancelMs ?? 0);
  const idle = valid.map((s) => s.idleAfterCancelMs ?? Number.NaN);
  const busy = idle.filter((x) => x === Number.POSITIVE_INFINITY).length;
  const measured = valid.flatMap((s) => (s.busyAfterCancel !== undefined ? [s.busyAfterCancel] : []));
  const kept = measured.filter(keptWorking).length;
  const median2 = (f: (b: Busy) => number) => median(measured.map(f));
  const threads = measured.length
    ? `; ${kept} of ${measured.length} cancelled calls left a thread computing; from ${fmt(options.settleMs / 3)} ms after the cancel on, the busiest thread was ${busyPhrase({ share: median2((b) => b.share), runPerBlockMs: median2((b) => b.runPerBlockMs) })} (medians)`
    : '';
  const finite = idle.filter(Number.isFinite);
  const quietAgain = finite.length
    ? `; CPU fell idle ${fmt(median(finite))} ms after the cancel (median of ${finite.length})`
    : '';
  return `Measured: CPU of the server's process tree in the ${options.settleMs} ms after each cancel median ${fmt(median(cpu))} ms, max ${fmt(Math.max(...cpu))} ms (limit ${options.maxCpuAfterCancelMs} ms)${threads}${quietAgain}${busy ? `; ${busy} of ${valid.length} still busy at the end of the window` : ''}.`;
}

/** What the uncancelled call showed. */
export function uncancelledPhrase(u: UncancelledCall): string {
  if (u.finishedEarly) return `an uncancelled call ended within --cancel-after-ms, before it could be measured`;
  return `an uncancelled call kept ${pct(u.coreShare)} of a core busy over ${fmt(u.windowMs)} ms${u.busy ? `, its busiest thread ${busyPhrase(u.busy)}` : ''}`;
}

/** One stop test, for anything cancelled: CPU in the window within the bound, and no thread of the tree kept working. */
export function stopVerdict(
  rule: string,
  title: string,
  cpuMs: number,
  busy: Busy | undefined,
  options: ProbeOptions,
): Verdict {
  const overCpu = cpuMs > options.maxCpuAfterCancelMs;
  const stopped = !overCpu && !keptWorking(busy);
  const numbers = `Measured: ${fmt(cpuMs)} ms CPU of the server's process tree in the ${options.settleMs} ms after the cancel (limit ${options.maxCpuAfterCancelMs} ms)${busy !== undefined ? `; from ${fmt(options.settleMs / 3)} ms after it on, the busiest thread was ${busyPhrase(busy)}` : ''}.`;
  const sentence = stopped
    ? 'The work stopped: CPU fell and no thread kept computing.'
    : `The work went on after the cancel: ${overCpu ? 'the server kept using CPU, over the limit' : 'a thread of the server kept computing'}.`;
  return { rule, title, outcome: stopped ? 'pass' : 'fail', evidence: `${sentence} ${numbers}` };
}
