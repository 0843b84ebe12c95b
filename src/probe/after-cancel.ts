/**
 * The messages a server sent for a cancelled call after it had read the
 * cancel: the evidence that the work went on, whatever the CPU says. "After
 * it had read the cancel" is the marker chain's proof (ordering.ts): only
 * what arrived after the last marker's answer counts.
 *
 * What names the call: its answer (by id) and its progress (by token), at
 * any time later in the run. A log (`notifications/message`) or a request to
 * the client carries no request id on stdio, so it is the cancelled call's
 * only while that call was the one request of the probe's still open: after
 * the marker chain and the quick call's answer, before the watch window ends
 * (the next cancelled call starts then). A `ping` from the server is nobody's
 * work; an error answer that says the call was cancelled is the cancel
 * accepted, judged by `cancel.no-answer`, not work that went on.
 */
import { saysCancelled } from './ordering.js';
import type { AfterCancelMessage, CancelSample } from './types.js';
import type { Wire } from './wire.js';

/** How much of each message the evidence quotes. */
const EXCERPT_CHARS = 240;

const excerpt = (msg: Record<string, unknown>) => {
  const text = JSON.stringify(msg);
  return text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text;
};

/** Every message for `sample`'s call that arrived after its marker chain was answered, in arrival order. */
export function messagesAfterCancel(wire: Wire, sample: CancelSample): AfterCancelMessage[] {
  const after = sample.markersDoneAt;
  if (sample.finishedBeforeCancel || after === undefined) return [];
  const out: AfterCancelMessage[] = [];
  for (const e of wire.log) {
    if (e.dir !== 'in' || e.t <= after) continue;
    const m = e.msg;
    const kind = kindOf(m, sample, e.t);
    if (kind) out.push({ kind, afterCancelMs: e.t - sample.cancelAt, excerpt: excerpt(m) });
  }
  return out;
}

function kindOf(m: Record<string, unknown>, sample: CancelSample, t: number): AfterCancelMessage['kind'] | undefined {
  if ('result' in m || 'error' in m) return m.id === sample.requestId && !saysCancelled(m) ? 'answer' : undefined;
  if (m.method === 'notifications/progress')
    return (m.params as { progressToken?: unknown } | undefined)?.progressToken === sample.token
      ? 'progress'
      : undefined;
  const alone = sample.aloneFrom !== undefined && t > sample.aloneFrom && t <= sample.windowEnd;
  if (!alone) return undefined;
  if (m.method === 'notifications/message') return 'log';
  if (typeof m.method === 'string' && 'id' in m && m.method !== 'ping') return 'request';
  return undefined;
}
