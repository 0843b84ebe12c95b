/**
 * Who asked for a cancel: the one list of sources, used by the metrics
 * (`mcp_cancel_pool_cancels_total{source}`, src/ops/instrument.ts) and the
 * traces (`mcp_cancel_pool.cancel.source`, src/otel/) alike, so the two can
 * never disagree. A cancel's reason stays text for people; the words each of
 * our own askers uses are {@link CANCEL_REASON}, and {@link cancelSourceOf}
 * reads a source back from them (a reason nobody of ours gives came with a
 * client's `notifications/cancelled`).
 */

/** Every source a cancel can have, in the order the docs list them. */
export const CANCEL_SOURCES = [
  /** A client's `notifications/cancelled`. */
  'notification',
  /** A 2026 exchange whose response stream the client closed. */
  'closed_stream',
  /** A stdio connection, a 2025 session or the server closing. */
  'session_close',
  /** The call's own deadline (`--timeout-ms`, or the tool's). */
  'deadline',
  /** A client's `tasks/cancel`. */
  'tasks_cancel',
  /** A task's ttl ran out. */
  'task_expired',
  /** A task the server made itself that nobody asked about for its lease (`--task-lease-ms`). */
  'task_lease',
  /** A worker host's look at the job's state in Redis found it gone or settled. */
  'lease',
  /** A worker host: the cancel was relayed from its front end. */
  'front_end',
  /** A 2026 call parked for input that no retry resumed in time (`--input-wait-ms`). */
  'input_wait',
  /** A 2026 call parked for input that another caller's retry took, or a retry refused before it resumed it. */
  'superseded',
  /** The executor or the front end closing. */
  'shutdown',
] as const;

/** Where a cancel came from; see {@link CANCEL_SOURCES}. */
export type CancelSource = (typeof CANCEL_SOURCES)[number];

/** The reason text each of our own fixed-word askers gives (the text is for people; the source is read from it). */
export const CANCEL_REASON = {
  tasksCancel: 'tasks/cancel',
  clientDisconnected: 'client disconnected',
  sessionClosed: 'session closed',
  /** A stdio connection or a 2025 session's transport closing (a 2026 exchange closing says 'client disconnected'). */
  transportClosed: 'transport closed',
  taskExpired: 'task expired',
  taskLeaseExpired: 'task lease expired',
  executorClosed: 'executor closed',
  frontEndClosing: 'front end closing',
  parkedByAnother: 'parked call of another caller',
  retryRefused: 'retry refused before it resumed the call',
  relayedFromFrontEnd: 'cancelled at the front end',
  deadline: 'deadline',
  shutdown: 'shutdown',
} as const;

const BY_REASON: Readonly<Record<string, CancelSource>> = {
  [CANCEL_REASON.tasksCancel]: 'tasks_cancel',
  [CANCEL_REASON.clientDisconnected]: 'closed_stream',
  [CANCEL_REASON.sessionClosed]: 'session_close',
  [CANCEL_REASON.transportClosed]: 'session_close',
  [CANCEL_REASON.taskExpired]: 'task_expired',
  [CANCEL_REASON.taskLeaseExpired]: 'task_lease',
  [CANCEL_REASON.executorClosed]: 'shutdown',
  [CANCEL_REASON.frontEndClosing]: 'shutdown',
  [CANCEL_REASON.parkedByAnother]: 'superseded',
  [CANCEL_REASON.retryRefused]: 'superseded',
  [CANCEL_REASON.relayedFromFrontEnd]: 'front_end',
  [CANCEL_REASON.deadline]: 'deadline',
  [CANCEL_REASON.shutdown]: 'shutdown',
};

/** The prefix of a worker host's lease cancel: `its Redis state is <what it found>`. */
export const LEASE_REASON_PREFIX = 'its Redis state is ';
/** The prefix of an input wait's cancel: `no retry within <n> ms (--input-wait-ms)`. */
export const INPUT_WAIT_REASON_PREFIX = 'no retry within ';

/**
 * The source of a cancel asked with `reason`; `unknown` is what a reason none of ours gives means where it is asked
 * (a client's notification for a call's cancel; a session closing for a session's).
 */
export function cancelSourceOf(reason: string | undefined, unknown: CancelSource = 'notification'): CancelSource {
  if (reason === undefined) return unknown;
  const known = BY_REASON[reason];
  if (known) return known;
  if (reason.startsWith(LEASE_REASON_PREFIX)) return 'lease';
  if (reason.startsWith(INPUT_WAIT_REASON_PREFIX)) return 'input_wait';
  if (reason.startsWith('tool call ')) return 'shutdown';
  return unknown;
}
