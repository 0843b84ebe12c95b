/**
 * Who asked for a cancel, from the reason its caller gave (the same words the
 * metrics seam reads, src/ops/instrument.ts). A reason nobody of ours gives
 * came with a client's `notifications/cancelled`.
 */

/** The sources a cancel span names. */
export type TraceCancelSource =
  | 'notification'
  | 'closed_stream'
  | 'session_close'
  | 'deadline'
  | 'tasks_cancel'
  | 'task_expired'
  | 'front_end'
  | 'lease'
  | 'input_wait'
  | 'superseded'
  | 'shutdown';

const BY_REASON: Readonly<Record<string, TraceCancelSource>> = {
  'tasks/cancel': 'tasks_cancel',
  'client disconnected': 'closed_stream',
  'session closed': 'session_close',
  'transport closed': 'session_close',
  'task expired': 'task_expired',
  'executor closed': 'shutdown',
  'front end closing': 'shutdown',
  // 2026 calls in rounds: another caller's retry took the parked call, or the retry was refused before it resumed it.
  'parked call of another caller': 'superseded',
  'retry refused before it resumed the call': 'superseded',
  // A worker host: a cancel relayed from its front end, or its once-a-second look at the job's lease in Redis.
  'cancelled at the front end': 'front_end',
};

/** The source of a cancel asked with `reason`. */
export function cancelSourceOf(reason: string | undefined): TraceCancelSource {
  if (reason === undefined) return 'notification';
  const known = BY_REASON[reason];
  if (known) return known;
  if (reason.startsWith('its Redis state is')) return 'lease';
  if (reason.startsWith('no retry within')) return 'input_wait'; // --input-wait-ms ran out
  if (reason.startsWith('tool call ') || reason === 'shutdown') return 'shutdown';
  return 'notification';
}
