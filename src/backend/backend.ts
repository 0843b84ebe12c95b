/**
 * The seam between the MCP front end and whatever runs the calls. The server,
 * the guard and the transports see only a {@link CallBackend}; the local
 * worker pool ({@link Executor}) is one implementation, a queue shared by many
 * hosts another. A backend decides each race between completion and
 * cancellation in one place (the state word locally, a compare-and-set
 * remotely), so a cancelled call never gets a response.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { RequestId } from '../wire/registry.js';
import type { ClientRequestMethod, ToolDefinition } from '../stages/tool.js';
import type { LoggingLevel } from '../stages/log-levels.js';
import type { CancelSource } from '../state/cancel-source.js';

/** Runs tool calls for the MCP front end; see the module comment. */
export interface CallBackend {
  /** Tools by name: metadata for `tools/list`; arguments are validated against `input` when a call starts. */
  readonly tools: ReadonlyMap<string, ToolDefinition>;
  /**
   * Registers an inbound call before anything expensive happens, so a
   * cancellation that arrives at once already finds it. Throws
   * {@link DuplicateRequestError} if the session has that id in flight, and
   * {@link ExecutorClosedError} once closed.
   */
  reserve(session: string, id: RequestId): CallHandle;
  /**
   * A peer's cancellation, looked up only among that session's inbound calls.
   * Resolves with the decision, for every backend: `cancelled-*` means
   * cancellation won and nothing will ever be sent for the call; `too-late`
   * means completion (or the deadline) won and the outcome will be answered.
   * The local pool decides at once (a CAS on the state word), the queue
   * backend when Redis has. Whatever it does not find or cannot stop is
   * ignored (and counted). Never rejects. `source` says who asked (for the
   * metrics and the traces; `reason` is text for people only).
   * @param source - default `'notification'`: a client's cancel
   */
  requestCancel(session: string, id: RequestId, reason?: string, source?: CancelSource): Promise<CancelResult>;
  /**
   * Cancels every call of a session (its transport closed).
   * @param source - default `'session_close'`
   */
  cancelSession(session: string, reason: string, source?: CancelSource): void;
  /** Calls of this session not settled yet (an idle HTTP session with none may be closed). */
  callsInFlight(session: string): number;
  /** A snapshot of the counters that `executor://stats` shows. */
  stats(): BackendStats;
  /**
   * Calls of lane `turn` ({@link StartOptions.turn}) waiting now: what the per-caller queue share counts, and what
   * `executor://stats` shows a caller as its own `queued`.
   */
  queuedOf?(turn: string): number;
  /** Cancels everything (each outcome settles as cancelled) and releases the backend's resources. */
  close(): Promise<void>;
}

/** One reserved call, from {@link CallBackend.reserve} until its outcome settles. */
export interface CallHandle {
  readonly session: string;
  readonly id: RequestId;
  /** Where the call is in its life; only `cancelled` means "send nothing". */
  readonly state: CallState;
  /** Queues the call. Never throws: an unknown tool, bad arguments or a full queue settle the outcome as failed. */
  start(options: StartOptions): Promise<JobOutcome>;
  /** Releases a reservation that will never start (the request was answered with an error first). */
  abandon(): void;
}

/**
 * Where a call is, as the server sees it, for every backend. `queued`: not on
 * a worker yet. `running`: on a worker (its reports are delivered).
 * `cancelling`: a cancel was asked and the backend has not decided yet (the
 * queue backend waits for Redis); nothing of the call is delivered meanwhile
 * except its outcome, should completion have won. `responding`: completion
 * won, the outcome is on its way. The rest are settled; only `cancelled` means
 * "send nothing".
 */
export type CallState =
  'queued' | 'running' | 'cancelling' | 'responding' | 'completed' | 'failed' | 'timedOut' | 'cancelled';

/** One progress report from a running job. */
export interface ProgressReport {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/** One log message from a running job's `ctx.log`. */
export interface LogEntry {
  readonly level: LoggingLevel;
  readonly message: string;
  /** Absent when the stage passed none. */
  readonly data?: unknown;
}

/**
 * Answers a stage's `ctx.requestClient` call; `signal` fires if the job stops
 * first. `relayId` is the worker host's id of the ask when it came through
 * Redis (multi-host mode): a 2026 task keeps it beside its question, so any
 * front end can send the answer to the host.
 */
export type ClientRequestHandler = (
  method: ClientRequestMethod,
  params: Record<string, unknown>,
  signal: AbortSignal,
  relayId?: string,
) => Promise<Record<string, unknown>>;

/** What to run, for {@link CallHandle.start}. */
export interface StartOptions {
  readonly tool: string;
  /** Arguments; validated against the tool's schema before the job is queued. */
  readonly args: unknown;
  /**
   * Higher runs first.
   * @default 0
   */
  readonly priority?: number;
  /** Overrides the tool's own deadline. */
  readonly timeoutMs?: number;
  /**
   * Receives progress, throttled in the worker. Every report the worker sent
   * before returning arrives before the outcome settles; none once the job was
   * stopped.
   */
  readonly onProgress?: (report: ProgressReport) => void;
  /** Receives the stages' `ctx.log` messages, with the same ordering as progress. Without it, `ctx.log` does nothing. */
  readonly onLog?: (entry: LogEntry) => void;
  /**
   * Messages below this level cost nothing in the worker.
   * @default 'debug'
   */
  readonly logLevel?: LoggingLevel;
  /**
   * Give the job a live channel for its logs, so they arrive while it runs.
   * Without one (and without progress or `usesClient`), logs are delivered
   * just before the outcome, and a call that logs nothing costs no channel.
   * @default false
   */
  readonly liveLogs?: boolean;
  /** Needed for tools declared with `usesClient`. */
  readonly onClientRequest?: ClientRequestHandler;
  /**
   * The call is the job of this task (or of the task it becomes at the end
   * of its task window). The local pool ignores it; the queue backend names
   * the job after it, so a front end sharing the task store can cancel it,
   * and the job outlives its front end once the task is stored.
   */
  readonly taskId?: string;
  /**
   * Whose turn the call takes in the local pool's fair queue: calls with one
   * key share a lane, lanes take turns (the authorized caller over HTTP, so
   * one caller's many sessions or requests do not get many lanes). The queue
   * backend ignores it.
   * @default the session
   */
  readonly turn?: string;
}

/** Why a call failed (it is still answered, with an error). */
export type FailureCode = 'stage' | 'crash' | 'queue_full' | 'unknown_tool' | 'invalid_arguments' | 'rejected';

/** How a job ended. Only `cancelled` means "send nothing". */
export type JobOutcome =
  | { readonly kind: 'completed'; readonly result: CallToolResult }
  | { readonly kind: 'failed'; readonly message: string; readonly stage?: string; readonly code: FailureCode }
  | { readonly kind: 'timedOut'; readonly timeoutMs: number; readonly hardKilled: boolean }
  | { readonly kind: 'cancelled'; readonly from: 'queued' | 'running'; readonly hardKilled: boolean };

/** Result of a cancellation request. */
export type CancelResult =
  /** Cancellation won before the job reached a worker. */
  | 'cancelled-queued'
  /** Cancellation won while a worker ran the job; it stops at its next boundary. */
  | 'cancelled-running'
  /** Completion (or the deadline) had already won; nothing changes. */
  | 'too-late'
  /** No such inbound request in that session. */
  | 'unknown';

/**
 * Counters for observability. Gauges: `running`, `stopping`, `queued`,
 * `inFlight`, `threads`; the rest only grow. A cancellation or deadline that
 * wins is counted the moment it wins, before the stopped job's worker has
 * returned; only `hardKilled` (and the `stopping` gauge) settle when it does.
 */
export interface BackendStats {
  /** Calls answered with their result. Counted when the response is handed to the server. */
  completed: number;
  /** Calls whose cancellation won, queued or running; counted when it wins. */
  cancelled: number;
  /** Calls answered with an error (stage failure, crash, full queue, bad arguments). */
  failed: number;
  /** Calls whose deadline won; counted when it wins. */
  timedOut: number;
  /** Jobs on a worker thread that were not stopped (a job answering its result counts until its worker returns). */
  running: number;
  /** Jobs cancelled or timed out while running whose worker has not returned yet (each still holds its thread). */
  stopping: number;
  /** Jobs waiting for a worker. */
  queued: number;
  /** Stopped jobs whose worker ignored its checkpoints past the grace period and was terminated; counted when it is gone. */
  hardKilled: number;
  /** Cancellations that arrived after completion (or the deadline) had won. */
  lateCancelsIgnored: number;
  /** Cancellations for no request in flight. */
  unknownCancelsIgnored: number;
  /** Log messages refused by their job's budget in the worker (see `StageContext.log`). */
  logsDropped: number;
  /** Progress and log messages that reached the main thread from workers (after the worker's throttle). */
  reportsReceived: number;
  /** Of those, the ones that arrived after their job was stopped: not delivered. */
  reportsDiscarded: number;
  /**
   * Child processes the tools started (`ctx.spawn` and plain `node:child_process` alike; docs/tools.md "What
   * stops, and how fast"). 0 on a front end of many hosts: each worker host counts its own.
   */
  childrenStarted: number;
  /** Child process groups ended by a stop of their call, by its end, or by `ctx.spawn`'s own bounds. */
  childrenKilled: number;
  /** Child process groups with a live member now. */
  childrenAlive: number;
  /** Children of terminated worker threads that died and could not be reaped (a Node without `node:ffi`). */
  childrenZombies: number;
  /**
   * Synchronous spawns in calls (`execSync`, `execFileSync`, `spawnSync`): they block the worker thread until the
   * program ends, so no cancel, and not the hard stop, reaches it meanwhile (`check-tools` names the tools).
   */
  childrenSync: number;
  /** Calls reserved and not settled yet. */
  inFlight: number;
  /** Worker threads, standby included. */
  threads: number;
  /**
   * Per tool, how long its stages went without a cancellation check (the
   * local pool, or a worker host's pool, measures; a front end on Redis has
   * none). Absent when gaps are not measured.
   */
  checkpointGaps?: Record<string, ToolGapStats>;
}

/** One tool's checkpoint gaps, in {@link BackendStats.checkpointGaps}. */
export interface ToolGapStats {
  /** The tool's `cancelWithinMs`. */
  cancelWithinMs: number;
  /** Calls measured (every call that reached a worker and returned from it). */
  calls: number;
  /** Of those, calls whose worst gap exceeded `cancelWithinMs`. */
  overBudget: number;
  /** The worst gap (ms) of any call. */
  worstMs: number;
  /** The stage the worst gap ended in. */
  worstStage: string;
  /** The worst gap (ms) of the last call measured. */
  lastMs: number;
}
