/** Turning the cancel samples and the races into pass/fail verdicts with their evidence. */
import { fmt, median, summarize } from './stats.js';
import type { CancelSample, ProbeOptions, RaceSample, Verdict } from './types.js';

export function sampleVerdicts(samples: readonly CancelSample[], options: ProbeOptions, cpuMeasured: boolean): Verdict[] {
  const out: Verdict[] = [];
  const valid = samples.filter((s) => !s.finishedBeforeCancel);
  const early = samples.length - valid.length;
  if (valid.length === 0) {
    out.push({ rule: 'cancel.setup', title: 'the long tool is still running when cancelled', outcome: 'fail', evidence: `all ${samples.length} calls finished within --cancel-after-ms ${options.cancelAfterMs}: give --args for a longer call` });
    return out;
  }
  const answered = valid.filter((s) => s.answersAfterCancelMs.length > 0);
  out.push({
    rule: 'cancel.no-answer',
    title: 'a cancelled running call gets no result and no error',
    outcome: answered.length ? 'fail' : 'pass',
    evidence: answered.length
      ? `${answered.length} of ${valid.length} cancelled calls were answered anyway, ${answered.map((s) => fmt(s.answersAfterCancelMs[0]!)).join(', ')} ms after the cancel`
      : `${valid.length} calls cancelled after ${options.cancelAfterMs} ms; nothing arrived for them in ${options.settleMs} ms each, nor later in the run${early ? ` (${early} more finished before their cancel and are not counted)` : ''}`,
  });
  if (cpuMeasured) {
    const cpu = valid.map((s) => s.cpuAfterCancelMs ?? 0);
    const m = median(cpu);
    const idle = valid.map((s) => s.idleAfterCancelMs ?? Number.NaN);
    const busy = idle.filter((x) => x === Number.POSITIVE_INFINITY).length;
    out.push({
      rule: 'cancel.work-stops',
      title: `the work stops: at most ${options.maxCpuAfterCancelMs} ms CPU after the cancel (median)`,
      outcome: m > options.maxCpuAfterCancelMs ? 'fail' : 'pass',
      evidence: `${m > options.maxCpuAfterCancelMs ? 'work did not stop: ' : ''}CPU in the ${options.settleMs} ms after the cancel, process tree: median ${fmt(m)} ms, max ${fmt(Math.max(...cpu))} ms; idle after median ${fmt(median(idle.filter(Number.isFinite)))} ms${busy ? `; ${busy} of ${valid.length} still busy at the end of the window` : ''}`,
    });
  } else {
    out.push({ rule: 'cancel.work-stops', title: 'the work stops after the cancel', outcome: 'skip', evidence: 'CPU not measurable: an HTTP server without --pid, or no /proc' });
  }
  const progressed = valid.filter((s) => s.progressAfterCancel > 0);
  out.push({
    rule: 'cancel.progress-stops',
    title: 'no progress notifications after the cancel (2026-07-28: MUST NOT send further messages)',
    outcome: progressed.length ? 'warn' : 'pass',
    evidence: progressed.length
      ? `${progressed.length} of ${valid.length} calls sent progress later than a round-trip window after their cancel; the last came ${fmt(Math.max(...progressed.map((s) => s.lastProgressAfterCancelMs ?? 0)))} ms after it`
      : 'none seen (or the tool reports no progress)',
  });
  const pings = valid.flatMap((s) => s.pingWhileRunningMs);
  const p = summarize(pings);
  out.push({
    rule: 'ping.while-running',
    title: 'ping is answered while the long tool runs',
    outcome: pings.length === 0 || p.max >= options.timeoutMs ? 'fail' : 'pass',
    evidence: pings.length ? `${pings.length} pings: p50 ${fmt(p.p50)} ms, p99 ${fmt(p.p99)} ms, max ${fmt(p.max)} ms` : 'no ping was answered',
  });
  return out;
}

export function raceVerdict(races: readonly RaceSample[], options: ProbeOptions): Verdict {
  const rule = 'race.no-answer-after-cancel';
  const title = 'complete-vs-cancel races: no answer a round trip after the cancel';
  if (options.quickTool === undefined || races.length === 0) return { rule, title, outcome: 'skip', evidence: options.quickTool === undefined ? 'no --quick-tool' : '--storm 0' };
  const count = (o: RaceSample['outcome']) => races.filter((r) => r.outcome === o).length;
  const bad = races.filter((r) => r.outcome === 'violation');
  return {
    rule,
    title,
    outcome: bad.length ? 'fail' : 'pass',
    evidence:
      `${races.length} races: ${count('completed')} answered before the cancel was sent, ${count('cancelled')} cancelled (no answer), ${count('crossed')} answered within the crossing window after the cancel (plausibly crossed), ${bad.length} violations` +
      (bad.length ? ` (${bad.map((r) => (r.answers > 1 ? `${r.answers} answers` : `${fmt(r.answerAfterCancelMs ?? 0)} ms after, window ${fmt(r.windowMs)} ms`)).join('; ')})` : ''),
  };
}
