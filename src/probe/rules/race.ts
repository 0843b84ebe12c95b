/**
 * Rule `race.no-answer-after-cancel`: complete-vs-cancel races with the quick
 * tool, one at a time: call, wait a delay spread over the call's usual
 * duration, cancel unless already answered, and send the marker chain right
 * behind the cancel (../ordering.ts). Over stdio every
 * {@link TOGETHER_EVERY}th race writes the call and its cancel in one write.
 *
 * Either outcome of a race is right: the answer (the call finished first) or
 * silence (the cancel won). What is wrong, and shown by the wire alone: an
 * answer after the whole marker chain to a call cancelled in the same write
 * (the server read the cancel right after the call, before any work of it
 * could be handed anywhere, and answered every marker before it sent the
 * answer; a server that answers a call while still reading that chunk sends
 * it before the markers: "crossed"); two answers to one call; an error
 * answer saying the call was cancelled (accepted, and answered anyway).
 * Everything else is counted, not judged: an answer between the cancel and
 * the end of the marker chain "crossed"; one after the whole chain is "late":
 * the server sent it after it had read the cancel, but may have decided it
 * before, on another thread (ours does: the worker's compare-and-swap wins,
 * and a loaded machine can hold the hand-off to the main thread back for many
 * round trips). Only the order of the wire is used, never a clock.
 */
import { callTool } from '../calls.js';
import { markerChain, orderOf, ORDERING_NOTE, saysCancelled, type MarkerChain } from '../ordering.js';
import { fmt, median, sleep } from '../stats.js';
import type { ProbeOptions, RaceSample, Verdict } from '../types.js';
import type { Wire } from '../wire.js';

const WARMUP_CALLS = 5;
/** Every this many races (the first included), the call and its cancel share one write, where the transport allows. */
const TOGETHER_EVERY = 5;

export async function raceCase(wire: Wire, options: ProbeOptions, tick: () => void): Promise<RaceSample[]> {
  const quick = options.quickTool;
  if (quick === undefined || options.storm === 0) return [];
  const durations: number[] = [];
  for (let i = 0; i < WARMUP_CALLS; i++) {
    const c = callTool(wire, quick, options.quickArgs);
    const a = await wire.answer(c.id, options.timeoutMs);
    if (a) durations.push(a.at - c.sentAt);
  }
  const typical = median(durations.length ? durations : [1]);
  const races: Race[] = [];
  for (let i = 0; i < options.storm; i++) {
    if (i % TOGETHER_EVERY === 0) {
      const t = wire.callAndCancelTogether({ name: quick, arguments: options.quickArgs }, 'probe: race, same write');
      if (t) {
        const chain = await markerChain(wire, t.sentAt, Promise.resolve(), options.markers, options.timeoutMs);
        races.push({ ...t, chain, together: true });
        tick();
        continue;
      }
    }
    const c = callTool(wire, quick, options.quickArgs);
    // Delays from 0 to 1.5× the usual duration: some answers come first, some cancels do.
    const delay = (1.5 * typical * i) / Math.max(1, options.storm - 1);
    if (delay < 1) await new Promise<void>((r) => setImmediate(r));
    else await sleep(delay);
    if (wire.answersFor(c.id).length > 0) {
      races.push(c);
    } else {
      const cancel = wire.sendCancel(c.id, 'probe: race');
      races.push({
        ...c,
        chain: await markerChain(wire, cancel.at, cancel.delivered, options.markers, options.timeoutMs),
      });
    }
    tick();
  }
  await sleep(options.quietMs); // late answers still count
  return races.map((r): RaceSample => judge(wire, r));
}

interface Race {
  readonly id: number;
  readonly sentAt: number;
  readonly chain?: MarkerChain;
  readonly together?: boolean;
}

function judge(wire: Wire, r: Race): RaceSample {
  const answers = wire.answersFor(r.id);
  const base = { requestId: r.id, answers: answers.length, ...(r.together && { together: true }) };
  if (r.chain === undefined) return { ...base, outcome: answers.length > 1 ? 'violation' : 'completed' };
  const cancelDelayMs = r.chain.cancelAt - r.sentAt;
  const first = answers[0];
  if (!first) return { ...base, cancelDelayMs, outcome: 'cancelled' };
  const order = orderOf(first.at, r.chain);
  const after = first.at - r.chain.cancelAt;
  const outcome: RaceSample['outcome'] =
    (r.together && order === 'after-markers') ||
    answers.length > 1 ||
    (order !== 'before-cancel' && saysCancelled(first.msg))
      ? 'violation'
      : order === 'before-cancel'
        ? 'completed'
        : order === 'after-markers'
          ? 'late'
          : 'crossed';
  return { ...base, cancelDelayMs, answerAfterCancelMs: after, order, outcome };
}

export function raceVerdict(races: readonly RaceSample[], options: ProbeOptions): Verdict {
  const rule = 'race.no-answer-after-cancel';
  const title = 'complete-vs-cancel races: no answer once the server has read the cancel';
  if (options.quickTool === undefined || races.length === 0)
    return {
      rule,
      title,
      outcome: 'skip',
      evidence: options.quickTool === undefined ? 'no --quick-tool' : '--storm 0',
    };
  const count = (o: RaceSample['outcome']) => races.filter((r) => r.outcome === o).length;
  const bad = races.filter((r) => r.outcome === 'violation');
  const unjudged = races.filter((r) => r.order === 'markers-unanswered').length;
  const together = races.filter((r) => r.together).length;
  const why = (r: RaceSample) =>
    r.answers > 1
      ? `${r.answers} answers`
      : r.together && r.order === 'after-markers'
        ? `cancelled in the same write as the call, answered ${fmt(r.answerAfterCancelMs ?? 0)} ms later, after all ${options.markers} markers behind it`
        : 'an error saying it was cancelled';
  return {
    rule,
    title,
    outcome: bad.length ? 'fail' : 'pass',
    evidence:
      `${races.length} races (${together ? `${together} with the cancel in the same write as the call` : 'no same-write races on this transport'}): ${count('completed')} answered before the cancel was sent, ${count('cancelled')} cancelled (no answer), ${count('crossed')} answered before the markers behind the cancel (may have crossed it), ${count('late')} answered after them (sent after the server read the cancel, possibly decided before: not judged), ${bad.length} violations` +
      (unjudged ? `; ${unjudged} with unanswered markers (not judged by order)` : '') +
      (bad.length ? ` (${bad.map(why).join('; ')})` : ''),
  };
}

export { ORDERING_NOTE };
