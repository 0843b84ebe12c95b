/**
 * The client's end of a task-augmented tool call (MCP 2025-11-25 tasks), for
 * any server that declares `tasks.requests.tools.call`.
 *
 * Cancelling a task is `tasks/cancel`, never `notifications/cancelled` (the
 * tools/call was answered with the task at once). It is sent at most once,
 * and only while the task is not known to be terminal: once a status
 * notification, a `tasks/get` or a `tasks/result` showed it ended, aborting
 * sends nothing. After the server accepted the cancel, `result()` rejects
 * with a {@link CallAbortedError} and a late result or progress is not
 * surfaced.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { isTerminal } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import {
  CallToolResultSchema,
  CancelTaskResultSchema,
  CreateTaskResultSchema,
  ErrorCode,
  GetTaskResultSchema,
  McpError,
  type CallToolRequest,
  type CallToolResult,
  type Progress,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestId } from '../wire/registry.js';
import { CallAbortedError } from '../errors.js';
import type { ClientGuard } from './guard.js';

/** The longest delay a Node timer accepts: tasks/result waits for the task, not for a timer. */
const MAX_TIMER_MS = 2_147_483_647;

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
  /** Requested ttl in ms (the server may grant less). Default: the server's. */
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
   * Waits for the task's result (`tasks/result`): the tool's result, or the
   * server's JSON-RPC error as an `McpError`. Rejects with a
   * {@link CallAbortedError} once our cancellation was accepted.
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
}

/** @internal One task seen from the client. */
export class ClientTask implements TaskHandle {
  private last: Task;
  /** The task is known to be terminal (a status said so, or tasks/result answered). */
  private ended = false;
  private cancelAccepted = false;
  /** The status last passed to `onstatus`. */
  private reported: Task['status'] | undefined;
  private abortReason: unknown;
  private cancelling: Promise<boolean> | undefined;
  private resulting: Promise<CallToolResult> | undefined;
  private readonly abortWaiters: ((error: CallAbortedError) => void)[] = [];
  private readonly onAbort = () => {
    this.abortReason = this.options.signal?.reason;
    void this.cancel(reasonText(this.abortReason)).catch(() => undefined);
  };

  constructor(
    private readonly sdk: Client,
    created: Task,
    readonly requestId: RequestId | undefined,
    private readonly options: TaskCallOptions,
    private readonly counters: TaskClientCounters,
    /** Runs once, when the task is known to be terminal: the client forgets it. */
    private readonly release: () => void,
  ) {
    this.last = created;
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

  /** @internal A status from the server (notification or answer). */
  observe(task: Task): void {
    if (this.cancelAccepted && task.status !== 'cancelled') return; // cancelled stays cancelled, here too
    if (this.reported !== undefined && isTerminal(this.reported)) return; // a terminal status never changes
    this.last = task;
    if (task.status !== this.reported) {
      this.reported = task.status;
      this.options.onstatus?.(task);
    }
    if (isTerminal(task.status)) this.end();
  }

  async status(): Promise<Task> {
    const task = await this.sdk.request({ method: 'tasks/get', params: { taskId: this.taskId } }, GetTaskResultSchema, { timeout: MAX_TIMER_MS });
    this.observe(task);
    return task;
  }

  result(): Promise<CallToolResult> {
    if (this.cancelAccepted) return Promise.reject(this.abortedError());
    this.resulting ??= this.fetchResult();
    return this.resulting;
  }

  cancel(reason?: string): Promise<boolean> {
    if (this.cancelling) return this.cancelling;
    if (this.ended) {
      this.counters.staleTaskCancelsSuppressed++;
      return Promise.resolve(false);
    }
    this.abortReason ??= reason;
    this.counters.taskCancelsSent++;
    this.cancelling = this.sdk.request({ method: 'tasks/cancel', params: { taskId: this.taskId } }, CancelTaskResultSchema, { timeout: MAX_TIMER_MS }).then(
      (task) => {
        if (task.status === 'cancelled') {
          this.cancelAccepted = true;
          for (const reject of this.abortWaiters.splice(0)) reject(this.abortedError());
        }
        this.observe(task);
        return this.cancelAccepted;
      },
      (error: unknown) => {
        // -32602: the task is terminal (completion won) or gone; its result is still there to read.
        if (error instanceof McpError && error.code === ErrorCode.InvalidParams) {
          this.end();
          return false;
        }
        throw error;
      },
    );
    return this.cancelling;
  }

  private async fetchResult(): Promise<CallToolResult> {
    const aborted = new Promise<never>((_, reject) => this.abortWaiters.push(reject));
    aborted.catch(() => undefined);
    const answer = this.sdk.request({ method: 'tasks/result', params: { taskId: this.taskId } }, CallToolResultSchema, { timeout: MAX_TIMER_MS });
    try {
      const result = await Promise.race([answer, aborted]);
      this.end();
      return result;
    } catch (error) {
      if (this.cancelAccepted) throw this.abortedError(); // a late completion is not surfaced
      this.end();
      throw error;
    } finally {
      answer.catch(() => undefined);
    }
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.options.signal?.removeEventListener('abort', this.onAbort); // no stale tasks/cancel from a later abort
    this.release();
  }

  private abortedError(): CallAbortedError {
    return new CallAbortedError('AbortError', this.abortReason, this.requestId, true);
  }
}

function reasonText(reason: unknown): string | undefined {
  if (reason === undefined) return undefined;
  if (reason instanceof Error) return reason.message;
  return typeof reason === 'string' ? reason : String(reason);
}

/** @internal What {@link callToolAsTask} needs of the client. */
export interface TaskClient {
  readonly sdk: Client;
  readonly guard: ClientGuard | undefined;
  readonly counters: TaskClientCounters;
  /** Tasks not yet known to be terminal, by id (the client routes `notifications/tasks/status` through it). */
  readonly tasks: Map<string, ClientTask>;
}

/** @internal The body of {@link CancelAwareClient.callToolAsTask}. */
export async function callToolAsTask(client: TaskClient, params: CallToolRequest['params'], options: TaskCallOptions): Promise<TaskHandle> {
  const { sdk, guard } = client;
  const { signal } = options;
  if (signal?.aborted) throw new CallAbortedError('AbortError', signal.reason, undefined, false);
  let handle: ClientTask | undefined;
  const early: Progress[] = [];
  const request = { method: 'tools/call' as const, params: { ...params, task: options.ttl === undefined ? {} : { ttl: options.ttl } } };
  // No SDK timeout or signal: either would send notifications/cancelled, which a task-augmented request must not get.
  const send = () =>
    sdk.request(request, CreateTaskResultSchema, {
      timeout: MAX_TIMER_MS,
      ...(options.onprogress && { onprogress: (p: Progress) => (handle ? handle.progress(p) : early.push(p)) }),
    });
  const sent = guard ? guard.captureRequestId(send) : { result: send(), id: undefined };
  const { task } = await sent.result;
  handle = new ClientTask(sdk, task, sent.id, options, client.counters, () => {
    client.tasks.delete(task.taskId);
    // The SDK keeps a task's progress handler until it hears of the end itself, which a client never does.
    (sdk as unknown as { _cleanupTaskProgressHandler?: (taskId: string) => void })._cleanupTaskProgressHandler?.(task.taskId);
  });
  if (!isTerminal(task.status)) client.tasks.set(task.taskId, handle);
  for (const p of early) handle.progress(p);
  if (isTerminal(task.status)) handle.observe(task);
  return handle;
}
