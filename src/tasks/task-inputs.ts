/**
 * 2026 tasks that ask the client (the extension's `input_required`). The
 * revision has no server-to-client requests, and a task's `tools/call` was
 * answered long ago: when the job's stage calls `ctx.requestClient`, the job
 * stays where it awaits, on its worker thread, its question is kept here
 * under a key unique over the task's life, and the task goes
 * `input_required`. `tasks/get` shows the outstanding questions as
 * `inputRequests`; `tasks/update` with `inputResponses` answers them and the
 * job runs on (the task back to `working` once nothing is outstanding).
 *
 * A task whose questions are not all answered within `waitMs`
 * (--input-wait-ms, as for a parked MRTR call) is cancelled through the
 * backend, by the same compare-and-set as any cancel: its job stops and its
 * slot is freed. A cancel of any kind rejects the job's open questions (its
 * signal aborts), so nothing is asked of the client any more.
 */
import type { ClientRequestHandler } from '../backend/backend.js';
import { cancelledAnswer } from './answer.js';
import { OpenQuestions, undeclared, type InputRequest } from '../asks/questions.js';
import { responsesProblem } from '../asks/retry.js';
import type { TaskCounters } from './counters.js';
import { TaskInputError } from './errors.js';
import type { TaskJobs } from './task-jobs.js';

/** One task that asked the client at least once, until its job ends. */
interface Asking {
  readonly owner: string;
  /** Outstanding questions by key (never reused over the task's life: the extension's rule). */
  readonly asks: OpenQuestions;
  /** Runs out --input-wait-ms after the task went `input_required`; cleared once nothing is outstanding. */
  timer: NodeJS.Timeout | undefined;
}

export class TaskInputs {
  private readonly asking = new Map<string, Asking>();

  constructor(
    private readonly jobs: TaskJobs,
    private readonly counters: TaskCounters,
    /** How long a task waits in `input_required` before it is cancelled. */
    readonly waitMs: number,
  ) {
    if (!Number.isInteger(waitMs) || waitMs < 1)
      throw new RangeError(`input wait must be a positive integer of ms (got ${waitMs})`);
  }

  /**
   * The job's `ctx.requestClient` for the owner's task `taskId`; `capabilities`
   * are those the creating request declared (never ask what it did not).
   */
  requester(owner: string, taskId: string, capabilities: Readonly<Record<string, unknown>>): ClientRequestHandler {
    return (method, params, signal) => {
      const refused = undeclared(method, capabilities, 'the clientCapabilities of the request that created this task');
      if (refused) return Promise.reject(refused);
      if (signal.aborted) return Promise.reject(new Error(`${method} not needed: the task stopped`));
      let asking = this.asking.get(taskId);
      if (!asking) {
        const entry: Asking = {
          owner,
          asks: new OpenQuestions(1, () => this.changed(taskId, entry)),
          timer: undefined,
        };
        this.asking.set(taskId, (asking = entry));
      }
      return asking.asks.ask(
        asking.asks.newKey(method),
        { method, params },
        signal,
        `${method} not needed: the task stopped`,
      );
    };
  }

  /** The task's outstanding questions (`inputRequests`), or undefined if it has none. */
  inputRequests(taskId: string): Record<string, InputRequest> | undefined {
    const asking = this.asking.get(taskId);
    if (!asking || asking.asks.size === 0) return undefined;
    return asking.asks.inputRequests();
  }

  /**
   * `tasks/update`: hands the answers to the owner's waiting questions. Keys
   * not outstanding are ignored (the extension), but an update must answer at
   * least one; throws {@link TaskInputError} for a task that waits for
   * nothing, responses that answer nothing it waits for, or a malformed one.
   */
  answer(owner: string, taskId: string, status: string, responses: Readonly<Record<string, unknown>>): void {
    const asking = this.asking.get(taskId);
    if (!asking || asking.owner !== owner || asking.asks.size === 0) {
      throw new TaskInputError(
        `task ${JSON.stringify(taskId)} is not waiting for input (status '${status}'): tasks/update answers the inputRequests of an input_required task`,
      );
    }
    const pending = asking.asks.pending();
    const matched = Object.keys(responses).filter((key) => pending.has(key));
    // The extension: keys not outstanding are ignored; with none left the update changes nothing (the task keeps
    // waiting, and tasks/get shows what it still asks).
    if (matched.length === 0) return;
    const problem = responsesProblem(pending, responses);
    if (problem !== undefined) throw new TaskInputError(problem);
    this.counters.updated();
    asking.asks.answer(responses);
  }

  /** The task's job ended (any way): nothing of it is asked any more. */
  ended(taskId: string): void {
    const asking = this.asking.get(taskId);
    if (!asking) return;
    this.asking.delete(taskId);
    if (asking.timer) this.leaveInputRequired(asking);
  }

  /** Stops the timers (the backend's close stops the jobs). */
  close(): void {
    for (const asking of this.asking.values()) clearTimeout(asking.timer);
    this.asking.clear();
  }

  /** The questions changed: the task's status follows (input_required while any is outstanding), and so does its wait. */
  private changed(taskId: string, asking: Asking): void {
    if (asking.asks.size > 0 && !asking.timer) {
      asking.timer = setTimeout(() => this.expire(taskId, asking), this.waitMs);
      asking.timer.unref(); // a wait never keeps the process alive
      this.counters.inputRequired(1);
      void this.jobs.store.mark(
        asking.owner,
        taskId,
        'input_required',
        'Waiting for the client: tasks/get shows inputRequests, tasks/update answers them.',
      );
    } else if (asking.asks.size === 0 && asking.timer) {
      this.leaveInputRequired(asking);
      void this.jobs.store.mark(asking.owner, taskId, 'working');
    }
  }

  private leaveInputRequired(asking: Asking): void {
    clearTimeout(asking.timer);
    asking.timer = undefined;
    this.counters.inputRequired(-1);
  }

  private expire(taskId: string, asking: Asking): void {
    if (this.asking.get(taskId) !== asking || asking.asks.size === 0) return;
    const reason = `no input within ${this.waitMs} ms (--input-wait-ms)`;
    void this.jobs.requestCancel(asking.owner, taskId, reason, 'input_wait').then(async (result) => {
      if (result !== 'cancelled-queued' && result !== 'cancelled-running') return; // its outcome won: it settles the task
      this.counters.inputWaitExpired();
      // As tasks/cancel does: the task reads cancelled from the moment the cancel won, not once the worker returned.
      await this.jobs.settle(
        asking.owner,
        taskId,
        'cancelled',
        cancelledAnswer(taskId),
        `The task was cancelled: ${reason}.`,
      );
    });
  }
}
