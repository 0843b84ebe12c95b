/** What crosses between the main thread and a pool worker. */
import type { MessagePort } from 'node:worker_threads';
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { ClientRequestMethod } from '../stages/tool.js';
import type { LoggingLevel } from '../stages/log-levels.js';

/** Given once to every worker, replacements included (Piscina `workerData`). */
export interface WorkerInit {
  /** The {@link StateSlab} memory. */
  readonly stateBuffer: SharedArrayBuffer;
  /** The `ChildCells` memory (src/state/child-cells.ts): each job's child process groups, beside its state word. */
  readonly childBuffer: SharedArrayBuffer;
  /** The executor's grace: the default `killGraceMs` of `ctx.spawn`. */
  readonly graceMs: number;
  /** File URLs of tool modules to import. */
  readonly toolModules: readonly string[];
  /** Settings every stage sees as `ctx.settings`. */
  readonly settings: Readonly<Record<string, unknown>>;
  /** Minimum gap between two progress reports the worker posts for one job; also the log budget's refill period. */
  readonly progressIntervalMs: number;
  /** The scheduling class each worker thread puts itself in when it starts. */
  readonly toolPriority: ToolPriority;
  /**
   * The checkpoint-gap clock's memory (src/state/gap-clock.ts); absent when
   * gaps are not measured (`checkpointGaps: false`), and checkpoints then do
   * only their atomic load.
   */
  readonly gapBuffer?: SharedArrayBuffer;
}

/**
 * How tool threads are scheduled. `idle` puts them in Linux's SCHED_IDLE
 * class, where any normal thread (the main thread with its transport,
 * cancels and Redis replies; other programs) preempts them at once.
 */
export type ToolPriority = 'normal' | 'idle';

/** What a worker thread got: `nice-19` where SCHED_IDLE could not be set. */
export interface AppliedToolPriority {
  readonly priority: 'normal' | 'idle' | 'nice-19';
  /** Why it is not what was asked, when it is not. */
  readonly note?: string;
}

/** What the warm-up job answers: the thread has loaded its tools and set its priority. */
export interface WarmupReport {
  readonly tools: number;
  readonly priority: AppliedToolPriority;
}

/** {@link WorkerTask.minLogSeverity} when nobody listens to a job's logs: above every level. */
export const NO_LOGS = 1000;

/** One job as sent to a worker: only the fields it needs, since every field costs a structured clone. */
export interface WorkerTask {
  readonly tool: string;
  readonly args: unknown;
  /** The job's {@link SlotRef}, packed into one number (see `packSlot`). */
  readonly slot: number;
  /** Present when the job has a port: progress is wanted, logs are live, or the tool talks to the client. */
  readonly port?: MessagePort;
  /** Present (true) when `ctx.progress` should post anything. */
  readonly progress?: true;
  /**
   * Severity index (see LOGGING_LEVELS) below which `ctx.log` is ignored;
   * absent: 0, every level (what a server's call asks for unless the client
   * set a level); {@link NO_LOGS}: nobody listens. With a port, logs are
   * posted as they come; without one, they ride in the outcome's {@link JobReports.tail}.
   */
  readonly minLogSeverity?: number;
  /** Present (true) while tracing is on: the worker notes when each stage began ({@link StageMarks}). */
  readonly trace?: true;
}

/**
 * When a traced job's stages ran, as the worker saw them: workers run no
 * OpenTelemetry SDK, so these travel back with the outcome and become spans
 * with explicit times on the main thread (src/otel/job-trace.ts). Times are
 * wall-clock milliseconds (`performance.timeOrigin + performance.now()`).
 */
export interface StageMarks {
  /** The worker's threadId. */
  readonly thread: number;
  /** Stage names, in the order they began. */
  readonly stages: readonly string[];
  /** When each of {@link stages} began. */
  readonly at: readonly number[];
  /** When the job ended on the thread (claimed its response, or saw it was stopped). */
  readonly end: number;
  /** The checkpoint at which a stopped job noticed its stop. */
  readonly stoppedAt?: string;
}

/** A progress report or a log message, as the worker posts it. */
export type ReportMessage =
  | { readonly type: 'progress'; readonly progress: number; readonly total?: number; readonly message?: string }
  | { readonly type: 'log'; readonly level: LoggingLevel; readonly message: string; readonly data?: unknown };

/**
 * What a job reported besides its result, attached to the outcome only when
 * there is something to say (a zero-work call carries none).
 */
export interface JobReports {
  /**
   * Reports posted on the task's port before the outcome. They travel on a
   * different channel from the outcome, so the main thread delivers the
   * outcome only once it has received this many.
   */
  readonly posted: number;
  /** Reports not posted (the throttled latest progress, logs of a job without a port): delivered before the outcome. */
  readonly tail?: readonly ReportMessage[];
  /** Log messages the job's budget refused. */
  readonly logsDropped?: number;
  /** A traced job's stage timings. */
  readonly marks?: StageMarks;
}

/**
 * How a job ended, as the worker reports it. The common case, a result with
 * nothing else reported, is the result itself: one object less to clone each
 * way on every call. It always has `content` (see `toCallToolResult`), which
 * no other outcome has ({@link isBareResult}).
 */
export type WorkerOutcome =
  /** Completion won the race and the job reported nothing else; the result is owed to the caller. */
  | CallToolResult
  /** Completion won the race; the result is owed to the caller, after the reports. */
  | { readonly kind: 'result'; readonly result: CallToolResult; readonly reports: JobReports }
  /** A stage failed and completion won the race, so the error is owed. */
  | { readonly kind: 'error'; readonly stage: string; readonly message: string; readonly reports?: JobReports }
  /** The job was stopped (cancel or deadline won); nothing it produced counts. */
  | { readonly kind: 'stopped'; readonly stage: string; readonly reports?: JobReports };

/** Whether an outcome is a bare result: the only kind with `content`, which `toCallToolResult` always sets. */
export function isBareResult(outcome: object): outcome is CallToolResult {
  return 'content' in outcome;
}

/** Worker → main over the task's port. */
export type WorkerMessage =
  | ReportMessage
  /** The requests a job made in one turn (a stage's Promise.all), in one message: the main thread sees them together. */
  | { readonly type: 'requests'; readonly asks: readonly ClientAsk[] };

/** One `ctx.requestClient` call, as it leaves the worker. */
export interface ClientAsk {
  readonly rid: number;
  readonly method: ClientRequestMethod;
  readonly params: Record<string, unknown>;
}

/** Main → worker over the task's port. */
export type MainMessage =
  | { readonly type: 'response'; readonly rid: number; readonly result: Record<string, unknown> }
  | { readonly type: 'error'; readonly rid: number; readonly message: string };
