/**
 * The client's end of a tool call run as a task, one handle for both eras:
 * - 2025-11-25: the `task` param of `tools/call` (the server declares
 *   `tasks.requests.tools.call`), `tasks/get`, blocking `tasks/result`,
 *   `tasks/cancel` answered with the task, `notifications/tasks/status`;
 * - 2026-07-28, the extension `io.modelcontextprotocol/tasks` (declared in
 *   the request's envelope): a flat `CreateTaskResult` (`resultType:
 *   "task"`), `tasks/get` with the result or error inline (polled, there is
 *   no `tasks/result`), `tasks/cancel` acknowledged empty; the server may
 *   also answer the call directly, and the handle is then completed.
 *
 * 2026 `input_required`: the questions `tasks/get` shows are answered by the
 * client's own handlers and sent back with `tasks/update` (./task-inputs.ts);
 * the handle then follows the task on to its result.
 *
 * Cancelling a task is `tasks/cancel`, never `notifications/cancelled` (the
 * tools/call was answered with the task at once). It is sent at most once,
 * and only while the task is not known to be terminal: once a status
 * notification, a `tasks/get` or a `tasks/result` showed it ended, aborting
 * sends nothing. After the server accepted the cancel, `result()` rejects
 * with a {@link CallAbortedError} and a late result or progress is not
 * surfaced.
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type Progress,
  type Task,
} from '@modelcontextprotocol/client';
import type { RequestId } from '../wire/registry.js';
import { CallAbortedError } from '../errors.js';
import type { OwnRequests } from './own-requests.js';
import { reasonText } from './reason.js';
import { TaskInputs, type InputDispatch } from './task-inputs.js';
import { errorOf, fromModern, isTerminal, TASKS_EXTENSION } from './task-shape.js';

/** How often `result()` asks `tasks/get` (2026, which has no blocking `tasks/result`) when the server suggests nothing. */
const DEFAULT_POLL_MS = 500;

/** Options for {@link CancelAwareClient.callToolAsTask}. */
export interface TaskCallOptions {
  /** Aborting it sends `tasks/cancel` once, if the task is not known to be terminal; `result()` then rejects with a {@link CallAbortedError}. */
  readonly signal?: AbortSignal;
  /** Progress of the task, with the original request's token, until it is terminal (or cancelled by us). */
  readonly onprogress?: (progress: Progress) => void;
  /**
   * Each status change, once: the first status the client learns and every
   * later one that differs from the one before, whichever way it came
   * (`notifications/tasks/status`, `status()`, `tasks/cancel`'s answer); the
   * same status learned twice (a notification and an answer) is not repeated.
   */
  readonly onstatus?: (task: Task) => void;
  /** Requested ttl in ms (the server may grant less). 2025 only: the 2026 extension lets the server choose. */
  readonly ttl?: number;
}

/** A running (or finished) task; see {@link CancelAwareClient.callToolAsTask}. */
export interface TaskHandle {
  readonly taskId: string;
  /** The id of the `tools/call` that created the task. */
  readonly requestId: RequestId | undefined;
  /** The last state of the task the client saw. */
  readonly task: Task;
  /** Asks the server (`tasks/get`). */
  status(): Promise<Task>;
  /**
   * Waits for the task's result (2025 `tasks/result`; 2026 `tasks/get`
   * polled, answering `input_required` questions with the client's handlers
   * on the way): the tool's result, or the server's JSON-RPC error as a
   * `ProtocolError`. Rejects with a {@link CallAbortedError} once our
   * cancellation was accepted, or with the error of a handler that failed
   * (the task is then cancelled).
   */
  result(): Promise<CallToolResult>;
  /**
   * Sends `tasks/cancel` (once; later calls share the answer) unless the task
   * is known to be terminal. True if the server cancelled the task; false if
   * it had already ended (it keeps its own status) or nothing was sent.
   */
  cancel(reason?: string): Promise<boolean>;
}

/** Counters the handles add to the client's stats. */
export interface TaskClientCounters {
  /** `tasks/cancel` requests sent. */
  taskCancelsSent: number;
  /** Cancellations not sent because the task was known to be terminal. */
  staleTaskCancelsSuppressed: number;
  /** 2026 `tasks/update` requests sent, each with a handler's answer to one of a task's `inputRequests`. */
  taskUpdatesSent: number;
}

/** @internal What every task handle of one connection shares. */
export interface TaskContext {
  readonly own: OwnRequests;
  /** The connection negotiated 2026-07-28: the extension, not the 2025 methods. */
  readonly modern: boolean;
  readonly counters: TaskClientCounters;
  /** 2026: runs the client's handler for an input request. */
  readonly dispatch?: InputDispatch;
}

/** @internal One task seen from the client. */
export class ClientTask implements TaskHandle {
  private last: Task;
  /** The task is known to be terminal (a status said so, or its result came). */
  private ended = false;
  private cancelAccepted = false;
  /** A handler of ours failed (or its answer was refused): the task was cancelled, and result() rejects with this. */
  private failure: Error | undefined;
  /** The status last passed to `onstatus`. */
  private reported: Task['status'] | undefined;
  private abortReason: unknown;
  private cancelling: Promise<boolean> | undefined;
  private resulting: Promise<CallToolResult> | undefined;
  /** 2026: the outcome `tasks/get` carried inline (or the direct answer). */
  private outcome: { result: CallToolResult } | { error: ProtocolError } | undefined;
  private readonly stopWaiters: ((error: Error) => void)[] = [];
  /** 2026: the task's questions to us; `wake` ends the poll's wait early (an answer was acknowledged). */
  private readonly inputs: TaskInputs | undefined;
  private wake: (() => void) | undefined;
  private readonly own: OwnRequests;
  private readonly modern: boolean;
  private readonly onAbort = () => {
    this.abortReason = this.options.signal?.reason;
    void this.cancel(reasonText(this.abortReason)).catch(() => undefined);
  };

  constructor(
    private readonly context: TaskContext,
    created: Task,
    readonly requestId: RequestId | undefined,
    private readonly options: TaskCallOptions,
    /** Runs once, when the task is known to be terminal: the client forgets it. */
    private readonly release: () => void,
  ) {
    this.own = context.own;
    this.modern = context.modern;
    this.last = created;
    if (this.modern && context.dispatch) {
      this.inputs = new TaskInputs(context.dispatch, {
        update: (inputResponses) => {
          context.counters.taskUpdatesSent++;
          return this.own.request('tasks/update', { taskId: this.taskId, inputResponses }, this.requestOptions())
            .result;
        },
        answered: () => this.wake?.(),
        failed: (error) => this.fail(error),
      });
    }
    this.options.signal?.addEventListener('abort', this.onAbort, { once: true });
    if (this.options.signal?.aborted) this.onAbort();
  }

  get taskId(): string {
    return this.last.taskId;
  }

  get task(): Task {
    return { ...this.last };
  }

  /** @internal Progress for this task's token: delivered while it may still matter. */
  progress(p: Progress): void {
    if (!this.ended && !this.cancelAccepted) this.options.onprogress?.(p);
  }

  /** @internal A status from the server (notification or answer), in either era's shape. */
  observe(raw: Record<string, unknown>): void {
    const task = this.modern ? fromModern(raw) : (raw as Task);
    if (this.cancelAccepted && task.status !== 'cancelled') return; // cancelled stays cancelled, here too
    if (this.reported !== undefined && isTerminal(this.reported)) return; // a terminal status never changes
    this.last = task;
    // Our tasks/cancel is out and the task says cancelled: that cancel won, whichever answer told us first
    // (a poll's tasks/get can overtake the cancel's own ack on a loaded machine).
    if (task.status === 'cancelled' && this.cancelling && !this.cancelAccepted) this.accept();
    if (this.modern && task.status === 'completed' && raw.result !== undefined)
      this.outcome = { result: raw.result as CallToolResult };
    if (this.modern && task.status === 'failed') this.outcome = { error: errorOf(raw.error) };
    if (task.status !== this.reported) {
      this.reported = task.status;
      this.options.onstatus?.(task);
    }
    if (isTerminal(task.status)) this.end();
    // Its questions, while nobody cancelled it: each new one to our handler, whichever read showed it.
    else if (task.status === 'input_required' && !this.cancelling) this.inputs?.offer(raw.inputRequests);
  }

  /** @internal 2026: the server answered the call directly; the handle is completed with it. */
  answered(result: CallToolResult): void {
    this.outcome = { result };
  }

  async status(): Promise<Task> {
    if (this.ended && this.outcome) return this.task; // terminal, and a direct answer has no task to ask about
    const raw = await this.own.request('tasks/get', { taskId: this.taskId }, this.requestOptions()).result;
    this.observe(raw);
    return this.task;
  }

  result(): Promise<CallToolResult> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.cancelAccepted) return Promise.reject(this.abortedError());
    this.resulting ??= this.fetchResult();
    return this.resulting;
  }

  cancel(reason?: string): Promise<boolean> {
    if (this.cancelling) return this.cancelling;
    if (this.ended) {
      this.context.counters.staleTaskCancelsSuppressed++;
      return Promise.resolve(false);
    }
    this.abortReason ??= reason;
    this.inputs?.stop(this.abortReason); // handlers at work see their signal fire; no tasks/update leaves after the cancel
    this.context.counters.taskCancelsSent++;
    this.cancelling = this.own.request('tasks/cancel', { taskId: this.taskId }, this.requestOptions()).result.then(
      async (answer) => {
        // 2025 answers with the task; 2026 acknowledges empty, and tasks/get tells what won.
        const task = this.modern
          ? await this.own.request('tasks/get', { taskId: this.taskId }, this.requestOptions()).result
          : answer;
        // 2026 cancellation may be eventually consistent: an acknowledged cancel of a task still running counts as accepted.
        if (task.status === 'cancelled' || (this.modern && !isTerminal(String(task.status)))) this.accept();
        this.observe(this.cancelAccepted && this.modern ? { ...task, status: 'cancelled' } : task);
        return this.cancelAccepted;
      },
      (error: unknown) => {
        // -32602: the task is terminal (completion won) or gone; its result is still there to read.
        if (error instanceof ProtocolError && error.code === (ProtocolErrorCode.InvalidParams as number)) {
          this.end();
          return false;
        }
        throw error;
      },
    );
    return this.cancelling;
  }

  private accept(): void {
    this.cancelAccepted = true;
    for (const reject of this.stopWaiters.splice(0)) reject(this.failure ?? this.abortedError());
  }

  /** A handler failed or its answer was refused: the task cannot go on; it is cancelled and result() rejects with the error. */
  private fail(error: Error): void {
    if (this.failure || this.ended || this.cancelAccepted) return;
    this.failure = error;
    for (const reject of this.stopWaiters.splice(0)) reject(error);
    void this.cancel(error.message).catch(() => undefined);
  }

  private async fetchResult(): Promise<CallToolResult> {
    const aborted = new Promise<never>((_, reject) => this.stopWaiters.push(reject));
    aborted.catch(() => undefined);
    const answer =
      this.modern || this.outcome
        ? this.poll()
        : (this.own.request('tasks/result', { taskId: this.taskId }).result as Promise<CallToolResult>);
    try {
      const result = await Promise.race([answer, aborted]);
      // 2025: tasks/result can overtake the terminal status notification (over HTTP they travel on different
      // streams); learn the status before the handle is forgotten, so onstatus reports it once, as it promises.
      if (!this.modern && (this.reported === undefined || !isTerminal(this.reported)))
        await this.status().catch(() => undefined);
      this.end();
      return result;
    } catch (error) {
      if (this.failure) throw this.failure;
      if (this.cancelAccepted) throw this.abortedError(); // a late completion is not surfaced
      this.end();
      throw error;
    } finally {
      answer.catch(() => undefined);
    }
  }

  /** 2026: `tasks/get` until the task is terminal (the extension has no blocking `tasks/result`). */
  private async poll(): Promise<CallToolResult> {
    while (!this.outcome && !this.cancelAccepted && !this.failure) {
      if (this.last.status === 'cancelled')
        throw new ProtocolError(ProtocolErrorCode.InvalidRequest, `task ${this.taskId} was cancelled`);
      await this.status();
      if (this.outcome || this.cancelAccepted || this.failure || isTerminal(this.last.status)) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.last.pollInterval ?? DEFAULT_POLL_MS);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
    if (this.failure) throw this.failure;
    if (this.cancelAccepted) throw this.abortedError();
    if (!this.outcome)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        `task ${this.taskId} ended ${this.last.status} without a result`,
      );
    if ('error' in this.outcome) throw this.outcome.error;
    return this.outcome.result;
  }

  private requestOptions() {
    return this.modern ? { capabilities: { extensions: { [TASKS_EXTENSION]: {} } } } : {};
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.options.signal?.removeEventListener('abort', this.onAbort); // no stale tasks/cancel from a later abort
    this.inputs?.stop('the task ended');
    this.release();
  }

  private abortedError(): CallAbortedError {
    return new CallAbortedError('AbortError', this.abortReason, this.requestId, true);
  }
}
