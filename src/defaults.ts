/**
 * Every default in one place: the CLI's flags, the transports and
 * `Executor.create` all read these, so a default is changed here only.
 */
import { availableParallelism } from 'node:os';
import type { ToolPriority } from './pool/protocol.js';

/** The environment variable the CLI reads the HTTP bearer token from when `--auth-token-file` is not given. */
export const AUTH_TOKEN_ENV = 'MCP_CANCEL_POOL_AUTH_TOKEN';

export const DEFAULTS = {
  /** Worker threads, and cores the workers may use: the machine's available parallelism. */
  threads: (): number => availableParallelism(),
  cores: (): number => availableParallelism(),
  /** Warm standby threads (see `ExecutorOptions.spareThreads`). */
  spareThreads: 1,
  /** With every core busy, how long a stopped job may keep its slot before the standby takes it. */
  handoffDelayMs: 2,
  /** Jobs allowed to wait for a worker. */
  queueLimit: 256,
  /** How long a stopped job may ignore its checkpoints before its worker is terminated. */
  graceMs: 1000,
  /** Minimum gap between two progress reports of one job (and the log budget's refill period). */
  progressIntervalMs: 50,
  /** How tool threads are scheduled (see `ExecutorOptions.toolPriority`). */
  toolPriority: 'normal' as ToolPriority,
  /** Largest accepted JSON-RPC message, stdio line or HTTP body. */
  maxMessageBytes: 4 * 1024 * 1024,
  /** HTTP: compressed bodies decoded at once, in all and per caller (the anonymous caller may use them all). */
  maxDecodes: 8,
  maxDecodesPerCaller: 4,
  /** HTTP: a request body of which fewer bytes than this arrive in one window is refused (408): 1 KiB/s. */
  minBodyBytesPerWindow: 5 * 1024,
  bodyRateWindowMs: 5000,
  /** HTTP: how long a client may take to send a request's headers, and the whole request. */
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  /** stdio and HTTP: deepest accepted nesting of a message. */
  maxNestingDepth: 128,
  /** Unread output above which a stdio connection's stdin is not read, and which a stream may hold past the unread timeout. */
  maxOutputBufferBytes: 1024 * 1024,
  /** Unread output all response streams of the process together may hold; past it stalled streams are closed. */
  maxUnreadOutputBytes: 64 * 1024 * 1024,
  /** How long a response stream holding unread output may go without its peer reading any, before it is closed. */
  unreadTimeoutMs: 30_000,
  /** How long a cancelled request to the peer waits for a late answer. */
  cancelledTtlMs: 30_000,
  /** HTTP: interface and port. */
  host: '127.0.0.1',
  port: 3000,
  /** HTTP: a session idle this long with nothing in flight is closed. */
  sessionIdleMs: 10 * 60_000,
  /** HTTP: how often idle sessions are looked for, at most. */
  sessionSweepMs: 30_000,
  /** HTTP: live sessions allowed at once. */
  maxSessions: 1000,
  /** Working tasks one session may have, and all sessions together (finished ones do not count). */
  maxWorkingTasksPerSession: 256,
  maxWorkingTasks: 4096,
  /** Bytes the finished tasks of the process keep (task and answer as JSON); past it the oldest finished go first. */
  maxFinishedTaskBytes: 64 * 1024 * 1024,
  /** ttl of a task whose request names none, and the longest ttl granted. */
  taskTtlMs: 10 * 60_000,
  maxTaskTtlMs: 60 * 60_000,
  /** `pollInterval` suggested to task clients, and tasks per `tasks/list` page. */
  taskPollIntervalMs: 500,
  taskPageSize: 50,
  /** stdio: what the end of stdin does (cancel the calls in flight, or finish and answer them). */
  onStdinClose: 'cancel' as 'cancel' | 'finish',
  /** stdio with --on-stdin-close finish: how long the calls in flight may take to be answered. */
  drainTimeoutMs: 25_000,
  /** A worker host on SIGTERM/SIGINT: how long its running jobs may finish before they are stopped and handed back. */
  hostDrainTimeoutMs: 25_000,
  /** How often expired tasks are removed, while any task is held (an idle server is not woken). */
  taskSweepMs: 1000,
  /** 2026: how long a call parked on `input_required` waits for the client's retry before it is cancelled. */
  inputWaitMs: 60_000,
  /** How long a 2026 call of an `optional` task tool may take before it becomes a task (0: at once). */
  taskAfterMs: 1000,
} as const;
