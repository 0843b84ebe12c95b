/**
 * The central case: cancel a long call that cannot have finished yet, then
 * watch the wire and the server's CPU for `settleMs`. One sample per call.
 */
import { sleep } from './stats.js';
import { treeCpuMs } from './cpu.js';
import type { CancelSample, ProbeOptions } from './types.js';
import type { Wire } from './wire.js';

/** Pause between pings while the long call runs: frequent enough to see a blocked server, light enough not to load it. */
const PING_GAP_MS = 10;
/** How often CPU is read during the watch window. */
const CPU_POLL_MS = 100;
/** A poll interval counts as busy when the tree used at least this share of one core in it (low: on a loaded machine a spinning process gets only part of a core). */
const BUSY_SHARE = 0.15;

export interface SampleContext {
  readonly wire: Wire;
  readonly pid: number | undefined;
  readonly options: ProbeOptions;
  /** p90 of the idle pings: with the pings during the call, sets the window in which progress may have crossed the cancel. */
  readonly idleRttMs: number;
}

/** Calls `tool` with a progress token; returns the request id and the token. */
export function callTool(wire: Wire, name: string, args: Record<string, unknown>): { id: number; sentAt: number; token: string } {
  const token = `probe-progress-${wire.peekId()}`;
  const sent = wire.request('tools/call', { name, arguments: args, _meta: { progressToken: token } });
  return { ...sent, token };
}

/** Pings one after another until `stop()` says so; each round trip (or, unanswered, its age at `deadline`) is kept. */
function pingLoop(wire: Wire, timeoutMs: number): { stop: () => void; results: (deadline: number) => Promise<number[]> } {
  let running = true;
  const rtts: number[] = [];
  let current: { sentAt: number; id: number } | undefined;
  const loop = (async () => {
    while (running) {
      current = wire.request('ping');
      const a = await wire.answer(current.id, timeoutMs);
      rtts.push(a ? a.at - current.sentAt : timeoutMs);
      current = undefined;
      if (!a) break;
      await sleep(PING_GAP_MS);
    }
  })();
  return {
    stop: () => void (running = false),
    results: async (deadline: number) => {
      const pending = current;
      await Promise.race([loop, sleep(Math.max(0, deadline - performance.now()))]);
      // A ping still unanswered at the end of the window: the server is blocked; count its age so far.
      if (pending && current === pending) rtts.push(performance.now() - pending.sentAt);
      return rtts;
    },
  };
}

export async function cancelSample(ctx: SampleContext): Promise<CancelSample> {
  const { wire, pid, options } = ctx;
  const call = callTool(wire, options.tool, options.args);
  const pings = pingLoop(wire, options.timeoutMs);
  await sleep(options.cancelAfterMs);
  const finishedBeforeCancel = wire.answersFor(call.id).length > 0;
  const cpu0 = pid !== undefined ? treeCpuMs(pid) : undefined;
  const cancelAt = wire.cancel(call.id);
  pings.stop();
  const end = cancelAt + options.settleMs;

  const next = options.quickTool !== undefined ? callTool(wire, options.quickTool, options.quickArgs) : undefined;
  const nextAnswer = next ? wire.answer(next.id, Math.max(options.settleMs, options.timeoutMs)) : Promise.resolve(undefined);

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
  const pingWhileRunningMs = await pings.results(end);
  const nextA = await nextAnswer;
  const stillBusy = lastBusyAt === prevAt && prevAt > cancelAt;
  // Progress sent before the server read the cancel may still arrive: the same crossing window as the race storm (storm.ts).
  const lastRtt = pingWhileRunningMs[pingWhileRunningMs.length - 1] ?? 0;
  const windowMs = 2 * Math.max(ctx.idleRttMs, lastRtt) + options.raceSlackMs;
  const progressAfter = wire.progressFor(call.token).filter((t) => t > cancelAt + windowMs);
  return {
    requestId: call.id,
    cancelAt,
    finishedBeforeCancel,
    answersAfterCancelMs: wire.answersFor(call.id).filter((a) => a.at >= cancelAt).map((a) => a.at - cancelAt),
    ...(nextA && next && { nextCallMs: nextA.at - cancelAt }),
    pingWhileRunningMs,
    ...(cpu0 !== undefined && cpuEnd !== undefined && {
      cpuAfterCancelMs: cpuEnd - cpu0,
      idleAfterCancelMs: stillBusy ? Number.POSITIVE_INFINITY : lastBusyAt - cancelAt,
    }),
    progressAfterCancel: progressAfter.length,
    ...(progressAfter.length > 0 && { lastProgressAfterCancelMs: progressAfter[progressAfter.length - 1]! - cancelAt }),
  };
}
