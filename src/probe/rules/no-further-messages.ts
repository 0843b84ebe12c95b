/**
 * Rule `cancel.no-further-messages`: nothing more for a cancelled request,
 * progress included. 2026-07-28 makes it a MUST ("MUST NOT send any further
 * messages"): a FAIL there; 2025-11-25 only says a cancelled request SHOULD
 * NOT be answered: a WARN. Only progress that arrived after the marker chain
 * behind the cancel counts (../ordering.ts). Log notifications carry no
 * request id on stdio and cannot be told apart, so they are not judged.
 */
import { ERAS } from '../era.js';
import { fmt } from '../stats.js';
import type { CancelSample, Era, Verdict } from '../types.js';

export function noFurtherMessagesVerdict(samples: readonly CancelSample[], era: Era, markers: number): Verdict {
  const rule = 'cancel.no-further-messages';
  const title = `no progress or other message for a cancelled request (${era === '2026' ? '2026-07-28: MUST NOT' : '2025-11-25: not required'})`;
  const valid = samples.filter((s) => !s.finishedBeforeCancel);
  const progressed = valid.filter((s) => s.progressAfterCancel > 0);
  const crossed = valid.reduce((n, s) => n + s.progressCrossed, 0);
  const unjudged = valid.filter((s) => !s.markersAnswered).length;
  const note = [
    crossed
      ? `${crossed} progress notification(s) arrived before the markers were answered (may have crossed the cancel; not counted)`
      : '',
    unjudged ? `${unjudged} sample(s) whose markers went unanswered cannot be judged` : '',
  ]
    .filter(Boolean)
    .join('; ');
  if (progressed.length === 0)
    return {
      rule,
      title,
      outcome: 'pass',
      evidence: `no progress for ${valid.length} cancelled calls once the server had answered the ${markers} marker(s) behind each cancel${note ? `; ${note}` : ''}`,
    };
  return {
    rule,
    title,
    outcome: ERAS[era].noFurtherMessagesIsMust ? 'fail' : 'warn',
    evidence: `${progressed.length} of ${valid.length} cancelled calls sent progress after the server had read the cancel and answered ${markers} marker(s); the last came ${fmt(Math.max(...progressed.map((s) => s.lastProgressAfterCancelMs ?? 0)))} ms after the cancel${note ? `; ${note}` : ''}`,
  };
}
