/**
 * The central case: cancel a long call that cannot have finished yet, send
 * the marker chain behind the cancel, then watch the wire and the server's
 * CPU for `settleMs`. One sample per call; the rules in rules/ judge them.
 */
import { callTool, markerLoop } from './calls.js';
import { processTree, busyOver, runnableThreads, treeCpuMs } from './cpu.js';
import { markerChain, orderOf } from './ordering.js';
import { sleep } from './stats.js';
import type { CancelSample, ProbeOptions } from './types.js';
import type { Wire } from './wire.js';

/** How often CPU is read during the watch window. */
const CPU_POLL_MS = 100;
/** Run-queue time counts from this share of the watch window on: the work gets time to reach its next checkpoint. */
const STATE_FROM = 1 / 3;
/** A poll interval counts as busy when the tree used at least this share of one core in it (low: on a loaded machine a spinning process gets only part of a core). */
const BUSY_SHARE = 0.15;

export interface SampleContext {
  readonly wire: Wire;
  readonly pid: number | undefined;
  readonly options: ProbeOptions;
}

export async function cancelledCall(ctx: SampleContext): Promise<CancelSample> {
  const { wire, pid, options } = ctx;
  const cpuStart = pid !== undefined ? treeCpuMs(pid) : undefined;
  const call = callTool(wire, options.tool, options.args);
  const markers = markerLoop(wire, options.timeoutMs);
  await sleep(options.cancelAfterMs);
  const finishedBeforeCancel = wire.answersFor(call.id).length > 0;
  const cpu0 = pid !== undefined ? treeCpuMs(pid) : undefined;
  const cancel = wire.sendCancel(call.id);
  const cancelAt = cancel.at;
  markers.stop();
  const chain = markerChain(wire, cancelAt, cancel.delivered, options.markers, options.timeoutMs);
  const end = cancelAt + options.settleMs;

  const next = options.quickTool !== undefined ? callTool(wire, options.quickTool, options.quickArgs) : undefined;
  const nextAnswer = next
    ? wire.answer(next.id, Math.max(options.settleMs, options.timeoutMs))
    : Promise.resolve(undefined);

  // Does a thread of the server keep working after the cancel? The kernel's own counts, from a third of the window on.
  const tree = pid !== undefined ? processTree(pid) : [];
  const runnableBefore = pid !== undefined ? runnableThreads(tree) : 0;
  const states =
    pid !== undefined ? busyOver(tree, cancelAt + STATE_FROM * options.settleMs, end) : Promise.resolve(undefined);
  // Watch CPU until the window ends.
  let lastBusyAt = cancelAt;
  let prev = cpu0;
  let cpuEnd = cpu0;
  let prevAt = cancelAt;
  while (performance.now() < end) {
    await sleep(Math.min(CPU_POLL_MS, Math.max(1, end - performance.now())));
    if (pid === undefined || prev === undefined) continue;
    const now = performance.now();
    const cpu = treeCpuMs(pid);
    if (cpu === undefined) break; // the server exited
    if (cpu - prev >= BUSY_SHARE * (now - prevAt)) lastBusyAt = now;
    prev = cpu;
    prevAt = now;
    cpuEnd = cpu;
  }
  const busy = await states;
  const pingWhileRunningMs = await markers.results(end);
  const nextA = await nextAnswer;
  const order = await chain;
  const stillBusy = lastBusyAt === prevAt && prevAt > cancelAt;
  const progress = wire.progressFor(call.token).filter((t) => t >= cancelAt);
  const progressAfter = progress.filter((t) => orderOf(t, order) === 'after-markers');
  // From here on nothing else of the probe's was open: a log or a request to the client can only be the cancelled call's.
  const aloneFrom =
    order.doneAt === undefined || (next && !nextA) ? undefined : Math.max(order.doneAt, nextA?.at ?? order.doneAt);
  return {
    requestId: call.id,
    token: call.token,
    cancelAt,
    finishedBeforeCancel,
    answersAfterCancelMs: wire
      .answersFor(call.id)
      .filter((a) => a.at >= cancelAt)
      .map((a) => a.at - cancelAt),
    afterCancel: [],
    windowEnd: end,
    ...(order.doneAt !== undefined && { markersDoneAt: order.doneAt }),
    ...(aloneFrom !== undefined && { aloneFrom }),
    ...(nextA && next && { nextCallMs: nextA.at - cancelAt }),
    pingWhileRunningMs,
    ...(cpu0 !== undefined &&
      cpuEnd !== undefined && {
        cpuAfterCancelMs: cpuEnd - cpu0,
        ...(cpuStart !== undefined && { cpuBeforeCancelMs: cpu0 - cpuStart }),
        runnableAtCancel: runnableBefore,
        ...(busy !== undefined && { busyAfterCancel: busy }),
        idleAfterCancelMs: stillBusy ? Number.POSITIVE_INFINITY : lastBusyAt - cancelAt,
      }),
    progressAfterCancel: progressAfter.length,
    progressCrossed: progress.length - progressAfter.length,
    markersAnswered: order.doneAt !== undefined,
    ...(progressAfter.length > 0 && { lastProgressAfterCancelMs: progressAfter[progressAfter.length - 1]! - cancelAt }),
  };
}
