/**
 * Complete-vs-cancel races with the quick tool, one at a time: ping (to
 * measure the round trip now), call, wait a delay spread over the call's
 * usual duration, cancel unless already answered.
 *
 * How an answer after the cancel is judged. The wire cannot show when the
 * server read the cancel, only when we sent it (c) and when the answer came
 * back (a). If the server sent the answer before the cancel reached it, the
 * answer left it at most one one-way trip after c and needs one more to come
 * back, so a ≤ c + RTT. An answer later than one round trip after the cancel
 * (RTT: the larger of the pings just before and just after this race, and
 * the median idle ping)
 * was sent after the cancel had had time to arrive: "violation". Within it:
 * "crossed" (plausibly in flight when the cancel was read). A slow server
 * whose event loop was busy reading nothing can push a crossing past the
 * window, so a violation here is strong evidence, not proof; a cancelled
 * long call that is answered is proof.
 */
import { median, quantile, sleep } from './stats.js';
import { callTool } from './cancel-samples.js';
import type { ProbeOptions, RaceSample } from './types.js';
import type { Wire } from './wire.js';

const WARMUP_CALLS = 5;

export async function raceStorm(wire: Wire, options: ProbeOptions, idlePingMs: readonly number[], tick: () => void): Promise<RaceSample[]> {
  const quick = options.quickTool;
  if (quick === undefined || options.storm === 0) return [];
  const durations: number[] = [];
  for (let i = 0; i < WARMUP_CALLS; i++) {
    const c = callTool(wire, quick, options.quickArgs);
    const a = await wire.answer(c.id, options.timeoutMs);
    if (a) durations.push(a.at - c.sentAt);
  }
  const typical = median(durations.length ? durations : [1]);
  const idleRtt = quantile([...idlePingMs].sort((a, b) => a - b), 0.9) || 0;
  const races: { id: number; sentAt: number; cancelAt?: number; windowMs: number }[] = [];
  for (let i = 0; i < options.storm; i++) {
    const before = (await wire.ping(options.timeoutMs)) ?? options.timeoutMs;
    const c = callTool(wire, quick, options.quickArgs);
    // Delays from 0 to 1.5× the usual duration: some answers come first, some cancels do.
    const delay = (1.5 * typical * i) / Math.max(1, options.storm - 1);
    if (delay < 1) await new Promise<void>((r) => setImmediate(r));
    else await sleep(delay);
    const cancelAt = wire.answersFor(c.id).length === 0 ? wire.cancel(c.id, 'probe: race') : undefined;
    await wire.answer(c.id, Math.max(2 * before, 20));
    const after = (await wire.ping(options.timeoutMs)) ?? options.timeoutMs;
    races.push({ id: c.id, sentAt: c.sentAt, windowMs: 2 * Math.max(before, after, idleRtt) + options.raceSlackMs, ...(cancelAt !== undefined && { cancelAt }) });
    tick();
  }
  await sleep(options.quietMs); // late answers still count
  return races.map((r): RaceSample => {
    const answers = wire.answersFor(r.id);
    const first = answers[0];
    const base = { requestId: r.id, windowMs: r.windowMs, answers: answers.length };
    if (r.cancelAt === undefined) return { ...base, outcome: answers.length > 1 ? 'violation' : 'completed' };
    const cancelDelayMs = r.cancelAt - r.sentAt;
    if (!first) return { ...base, cancelDelayMs, outcome: 'cancelled' };
    const after = first.at - r.cancelAt;
    const outcome = answers.length > 1 || after > r.windowMs ? 'violation' : after <= 0 ? 'completed' : 'crossed';
    return { ...base, cancelDelayMs, answerAfterCancelMs: after, outcome };
  });
}
