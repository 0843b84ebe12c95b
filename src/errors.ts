/**
 * The errors this package throws, each with a stable `code` to branch on
 * (messages are for people and may change).
 */
import type { RequestId } from './wire/registry.js';

/** Stable codes of {@link McpCancelPoolError}. */
export type ErrorCodeName =
  | 'ERR_DUPLICATE_REQUEST'
  | 'ERR_EXECUTOR_CLOSED'
  | 'ERR_INVALID_OPTION'
  | 'ERR_HTTP_CONFIG'
  | 'ERR_TOOL_MODULE'
  | 'ERR_REDIS_CONFIG'
  | 'ERR_REDIS_AUTH'
  | 'ERR_REDIS_UNREACHABLE'
  | 'ERR_TASK_LIMIT'
  | 'ERR_INVALID_CURSOR'
  | 'ERR_TASK_NOT_FOUND'
  | 'ERR_TASK_TERMINAL'
  | 'ERR_TASK_INPUT'
  | 'ERR_JOB_STOPPED'
  | 'ERR_SPAWN'
  | 'ERR_CALL_ABORTED'
  | 'ERR_CALL_TIMED_OUT'
  | 'ERR_USAGE'
  | 'ERR_MISSING_PEER';

/** Base class of every error this package throws on purpose. */
export class McpCancelPoolError extends Error {
  constructor(
    /** Stable; see {@link ErrorCodeName}. */
    readonly code: ErrorCodeName,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** Thrown by `reserve` when the same session already has that id in flight. */
export class DuplicateRequestError extends McpCancelPoolError {
  constructor(
    readonly session: string,
    readonly id: RequestId,
  ) {
    super('ERR_DUPLICATE_REQUEST', `request id ${JSON.stringify(id)} is already in flight in this session`);
  }
}

/** An HTTP configuration that must not be served; the CLI prints its message as one line and exits non-zero. */
export class HttpConfigError extends McpCancelPoolError {
  constructor(message: string) {
    super('ERR_HTTP_CONFIG', message);
  }
}

/** Thrown by `reserve` once the executor is closed. */
export class ExecutorClosedError extends McpCancelPoolError {
  constructor() {
    super('ERR_EXECUTOR_CLOSED', 'executor is closed');
  }
}

/** Thrown by `Executor.create` for an option out of range; names the option. */
export class InvalidOptionError extends McpCancelPoolError {
  constructor(
    /** The option's name, e.g. `threads`. */
    readonly option: string,
    message: string,
  ) {
    super('ERR_INVALID_OPTION', `invalid option ${option}: ${message}`);
  }
}

/** A tool module that cannot be used: it exports no tools, or defines a tool twice. */
export class ToolModuleError extends McpCancelPoolError {
  constructor(message: string) {
    super('ERR_TOOL_MODULE', message);
  }
}

/** A Redis location that cannot be used: no URL, not a Redis URL, an unreadable URL or CA file. The message names no secret. */
export class RedisConfigError extends McpCancelPoolError {
  constructor(message: string) {
    super('ERR_REDIS_CONFIG', message);
  }
}

/** Redis refused the credentials of the URL (wrong password or user). The message names no secret. */
export class RedisAuthError extends McpCancelPoolError {
  constructor(message: string) {
    super('ERR_REDIS_AUTH', message);
  }
}

/** Redis did not answer in time (down, unreachable, or stalled). The message names no secret. */
export class RedisUnreachableError extends McpCancelPoolError {
  constructor(message: string) {
    super('ERR_REDIS_UNREACHABLE', message);
  }
}

/**
 * A client call that was given up: its `signal` fired (`AbortError`) or its
 * timeout passed (`TimeoutError`), the names DOM abort errors use.
 */
export class CallAbortedError extends McpCancelPoolError {
  override readonly name: 'AbortError' | 'TimeoutError';
  /** The signal's reason, or the timeout's message. */
  readonly reason: unknown;
  /** The request's id on the wire, if it had been sent. */
  readonly requestId: RequestId | undefined;
  /** Whether `notifications/cancelled` went out: false if the response had already arrived (no stale cancellation) or nothing was sent. */
  readonly cancelSent: boolean;

  constructor(
    kind: 'AbortError' | 'TimeoutError',
    reason: unknown,
    requestId: RequestId | undefined,
    cancelSent: boolean,
  ) {
    const why =
      reason instanceof Error
        ? reason.message
        : typeof reason === 'string'
          ? reason
          : reason === undefined
            ? undefined
            : // eslint-disable-next-line @typescript-eslint/no-base-to-string -- shown as JavaScript shows it
              String(reason);
    super(
      kind === 'TimeoutError' ? 'ERR_CALL_TIMED_OUT' : 'ERR_CALL_ABORTED',
      `${kind === 'TimeoutError' ? 'timed out' : 'aborted'}${requestId === undefined ? '' : ` (request ${JSON.stringify(requestId)})`}: ${why ?? 'no reason given'}`,
    );
    this.name = kind;
    this.reason = reason;
    this.requestId = requestId;
    this.cancelSent = cancelSent;
  }
}

/** `TaskStore.create` refused: a task limit (`TaskLimits`) is reached. */
export class TaskLimitError extends McpCancelPoolError {
  constructor(message: string) {
    super('ERR_TASK_LIMIT', message);
    this.name = 'TaskLimitError';
  }
}

/**
 * The per-caller task limit's refusal (the owner: a 2026 caller, or a 2025 session). Every task store words its
 * refusals with this and {@link totalTaskLimit}, each naming the limit that refused (issue 64).
 */
export function perOwnerTaskLimit(limits: { readonly maxWorkingTasksPerSession: number }): TaskLimitError {
  return new TaskLimitError(
    `per-caller task limit reached: this caller (or 2025 session) has ${limits.maxWorkingTasksPerSession} working tasks (--max-working-tasks-per-session); wait for one to finish or cancel one`,
  );
}

/**
 * The total task limit's refusal; `where` says what "all" is (this process's sessions, or the queue's). */
export function totalTaskLimit(limits: { readonly maxWorkingTasks: number }, where: string): TaskLimitError {
  return new TaskLimitError(
    `total task limit reached: ${limits.maxWorkingTasks} working tasks ${where} (--max-working-tasks); try again later`,
  );
}

/** `TaskStore.list` got a cursor it never issued. */
export class InvalidCursorError extends McpCancelPoolError {
  constructor(cursor: string) {
    super('ERR_INVALID_CURSOR', `invalid tasks/list cursor ${JSON.stringify(cursor)}`);
    this.name = 'InvalidCursorError';
  }
}
