/**
 * Rule `cancel.no-answer`: a cancelled running call gets no result and no
 * error, ever. Its case is the cancelled long call (../cancelled-call.ts): a
 * call that cannot have finished, so any answer at all is the evidence; no
 * ordering is needed. Over 2025 HTTP every cancel travels on its own POST,
 * so the same evidence also shows `http.cancel-own-post`.
 */
import { fmt } from '../stats.js';
import type { CancelSample, Era, ProbeOptions, TargetSpec, Verdict } from '../types.js';

export function noAnswerVerdicts(
  samples: readonly CancelSample[],
  options: ProbeOptions,
  spec: TargetSpec,
  era: Era,
): Verdict[] {
  const valid = samples.filter((s) => !s.finishedBeforeCancel);
  const early = samples.length - valid.length;
  if (valid.length === 0) {
    return [
      {
        rule: 'cancel.setup',
        title: 'the long tool is still running when cancelled',
        outcome: 'fail',
        evidence: `all ${samples.length} calls finished within --cancel-after-ms ${options.cancelAfterMs}: give --args for a longer call`,
      },
    ];
  }
  const answered = valid.filter((s) => s.answersAfterCancelMs.length > 0);
  const closed = spec.kind === 'http' && era === '2026';
  const verdict: Verdict = {
    rule: 'cancel.no-answer',
    title: 'a cancelled running call gets no result and no error',
    outcome: answered.length ? 'fail' : 'pass',
    evidence: answered.length
      ? `${answered.length} of ${valid.length} cancelled calls were answered anyway, ${answered.map((s) => fmt(s.answersAfterCancelMs[0]!)).join(', ')} ms after the cancel`
      : closed
        ? `${valid.length} calls cancelled by closing their response stream after ${options.cancelAfterMs} ms: that stream can carry nothing more, and nothing for them arrived anywhere else${early ? ` (${early} more finished before their cancel and are not counted)` : ''}`
        : `${valid.length} calls cancelled after ${options.cancelAfterMs} ms; nothing arrived for them in ${options.settleMs} ms each, nor later in the run${early ? ` (${early} more finished before their cancel and are not counted)` : ''}`,
  };
  const out = [verdict];
  if (spec.kind === 'http' && era === '2025') {
    out.push({
      ...verdict,
      rule: 'http.cancel-own-post',
      title: 'a cancel on its own POST reaches the call',
      evidence: `every cancel above travelled on its own POST: ${verdict.evidence}`,
    });
  }
  return out;
}
