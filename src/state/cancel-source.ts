/**
 * Who asked for a cancel: the one list of sources. Each asker names its
 * source where it asks, and the source travels with the cancel to the job,
 * the metrics (`mcp_cancel_pool_cancels_total{source}`, src/ops/instrument.ts)
 * and the traces (`mcp_cancel_pool.cancel.source`, src/otel/); nothing reads
 * it back out of the reason, which is text for people only.
 */

/** Every source a cancel can have, in the order the docs list them. */
export const CANCEL_SOURCES = [
  /** A client's `notifications/cancelled` (and a cancel asked through the public API without a source). */
  'notification',
  /** A 2026 exchange (or a 2025 POST) whose response stream the client closed. */
  'closed_stream',
  /** A stdio connection or a 2025 session closing. */
  'session_close',
  /** The call's own deadline (`--timeout-ms`, or the tool's). */
  'deadline',
  /** A client's `tasks/cancel`. */
  'tasks_cancel',
  /** A task's ttl ran out. */
  'task_expired',
  /** A task the server made itself that nobody asked about within its lease (`--task-lease-ms`). */
  'task_lease',
  /** A worker host's look at the job's state in Redis found it gone, settled or taken elsewhere. */
  'lease',
  /** A worker host: the cancel was relayed from its front end. */
  'front_end',
  /** A call or task waiting for the client's input that got none in time (`--input-wait-ms`). */
  'input_wait',
  /** A 2026 call parked for input that another caller's retry took, or a retry refused before it resumed it. */
  'superseded',
  /** The executor, the front end or the worker host closing. */
  'shutdown',
] as const;

/** Where a cancel came from; see {@link CANCEL_SOURCES}. */
export type CancelSource = (typeof CANCEL_SOURCES)[number];
