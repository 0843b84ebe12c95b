/**
 * Rule `race.no-answer-after-cancel`: complete-vs-cancel races with the quick
 * tool, one at a time: call, wait a delay spread over the call's usual
 * duration, cancel unless already answered, and send the marker chain right
 * behind the cancel (../ordering.ts).
 *
 * Either outcome of a race is right: the answer (the call finished first) or
 * silence (the cancel won). What is wrong, and shown by the wire alone: two
 * answers to one call; an error answer saying the call was cancelled (the
 * cancel was accepted, and answered anyway); an answer that arrived after
 * the whole marker chain (the server had read the cancel and answered every
 * marker before it sent it). An answer between the cancel and the end of the
 * chain "crossed": it may have been decided before the cancel was read.
 */
import { callTool } from '../calls.js';
import { markerChain, orderOf, ORDERING_NOTE, saysCancelled, type MarkerChain } from '../ordering.js';
import { fmt, median, sleep } from '../stats.js';
import type { ProbeOptions, RaceSample, Verdict } from '../types.js';
import type { Wire } from '../wire.js';

const WARMUP_CALLS = 5;

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
  const races: { id: number; sentAt: number; chain?: MarkerChain }[] = [];
  for (let i = 0; i < options.storm; i++) {
    const c = callTool(wire, quick, options.quickArgs);
    // Delays from 0 to 1.5× the usual duration: some answers come first, some cancels do.
    const delay = (1.5 * typical * i) / Math.max(1, options.storm - 1);
    if (delay < 1) await new Promise<void>((r) => setImmediate(r));
    else await sleep(delay);
    if (wire.answersFor(c.id).length > 0) {
      races.push(c);
    } else {
      const cancel = wire.cancel(c.id, 'probe: race');
      races.push({ ...c, chain: await markerChain(wire, cancel.at, cancel.delivered, options.markers, options.timeoutMs) });
    }
    tick();
  }
  await sleep(options.quietMs); // late answers still count
  return races.map((r): RaceSample => judge(wire, r));
}

function judge(wire: Wire, r: { id: number; sentAt: number; chain?: MarkerChain }): RaceSample {
  const answers = wire.answersFor(r.id);
  const base = { requestId: r.id, answers: answers.length };
  if (r.chain === undefined) return { ...base, outcome: answers.length > 1 ? 'violation' : 'completed' };
  const cancelDelayMs = r.chain.cancelAt - r.sentAt;
  const first = answers[0];
  if (!first) return { ...base, cancelDelayMs, outcome: 'cancelled' };
  const order = orderOf(first.at, r.chain);
  const after = first.at - r.chain.cancelAt;
  const outcome: RaceSample['outcome'] =
    answers.length > 1 || order === 'after-markers' || (order !== 'before-cancel' && saysCancelled(first.msg)) ? 'violation' : order === 'before-cancel' ? 'completed' : 'crossed';
  return { ...base, cancelDelayMs, answerAfterCancelMs: after, order, outcome };
}

export function raceVerdict(races: readonly RaceSample[], options: ProbeOptions): Verdict {
  const rule = 'race.no-answer-after-cancel';
  const title = 'complete-vs-cancel races: no answer once the server has read the cancel';
  if (options.quickTool === undefined || races.length === 0) return { rule, title, outcome: 'skip', evidence: options.quickTool === undefined ? 'no --quick-tool' : '--storm 0' };
  const count = (o: RaceSample['outcome']) => races.filter((r) => r.outcome === o).length;
  const bad = races.filter((r) => r.outcome === 'violation');
  const unjudged = races.filter((r) => r.order === 'markers-unanswered').length;
  const why = (r: RaceSample) => (r.answers > 1 ? `${r.answers} answers` : r.order === 'after-markers' ? `answered ${fmt(r.answerAfterCancelMs ?? 0)} ms after the cancel, after all ${options.markers} markers behind it` : 'an error saying it was cancelled');
  return {
    rule,
    title,
    outcome: bad.length ? 'fail' : 'pass',
    evidence:
      `${races.length} races: ${count('completed')} answered before the cancel was sent, ${count('cancelled')} cancelled (no answer), ${count('crossed')} answered before the markers behind the cancel (may have crossed it), ${bad.length} violations` +
      (unjudged ? `; ${unjudged} with unanswered markers (not judged by order)` : '') +
      (bad.length ? ` (${bad.map(why).join('; ')})` : ''),
  };
}

export { ORDERING_NOTE };
