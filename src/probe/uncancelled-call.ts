/**
 * Can CPU tell whether the long tool's work stopped? Only if the work uses
 * CPU. One call of the tool is left to run, uncancelled, over a window as
 * long as a cancelled call's (after the same `--cancel-after-ms` start), and
 * the server's process tree is measured: a tool that waits (sleeps, I/O,
 * another service) looks the same to CPU whether it goes on or stopped.
 *
 * "Uses a quarter of a core" is read two ways, either enough: the tree's CPU
 * over the window, and, since on a loaded machine a computing thread gets
 * only a share of a core, its busiest thread runnable (on a core or queued
 * for one, the kernel's counts) at least a quarter of the time while it
 * computes rather than wakes (the same CPU per blocking wait as
 * `cancel.work-stops` asks of a thread that kept working). The call is
 * cancelled after the window, so that it does not hold the server during
 * the cases that follow.
 */
import { callTool } from './calls.js';
import { busyOver, processTree, treeCpuMs } from './cpu.js';
import { WORKING_RUN_PER_BLOCK_MS } from './rules/work-stops.js';
import { sleep } from './stats.js';
import type { ProbeOptions, UncancelledCall } from './types.js';
import type { Wire } from './wire.js';

/** The share of one core the tool must keep busy for CPU to tell (the "a quarter of a core"). */
export const CPU_CAN_TELL_SHARE = 0.25;

/** Calls the long tool, measures it over `[cancelAfterMs, cancelAfterMs + settleMs]` of its run, then cancels it. */
export async function uncancelledCall(wire: Wire, pid: number, options: ProbeOptions): Promise<UncancelledCall> {
  const call = callTool(wire, options.tool, options.args);
  await sleep(options.cancelAfterMs);
  const tree = processTree(pid);
  const cpu0 = treeCpuMs(pid);
  const from = performance.now();
  const finishedEarly = wire.answersFor(call.id).length > 0;
  const busy = finishedEarly ? undefined : await busyOver(tree, from, from + options.settleMs);
  const to = performance.now();
  const cpu1 = treeCpuMs(pid);
  if (wire.answersFor(call.id).length === 0) wire.sendCancel(call.id, 'probe: end of the uncancelled measurement');
  const windowMs = to - from;
  const coreShare = cpu0 !== undefined && cpu1 !== undefined && windowMs > 0 ? (cpu1 - cpu0) / windowMs : 0;
  const computing =
    busy !== undefined && busy.share >= CPU_CAN_TELL_SHARE && busy.runPerBlockMs >= WORKING_RUN_PER_BLOCK_MS;
  return {
    coreShare,
    ...(busy !== undefined && { busy }),
    windowMs,
    finishedEarly,
    cpuCanTell: !finishedEarly && (coreShare >= CPU_CAN_TELL_SHARE || computing),
  };
}
