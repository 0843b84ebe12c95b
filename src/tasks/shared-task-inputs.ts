/**
 * 2026 tasks that ask the client, when the tasks live in a store shared by
 * several front ends (`serve --redis`: remote/tasks/task-input-store.ts). The same
 * face as ./task-inputs.ts (`inputRequests` in `tasks/get`, `tasks/update`
 * answers, --input-wait-ms, a cancel rejects the questions), but the
 * questions are kept in the shared store, not in this process:
 *
 * - the front end the worker host asked keeps each question there with the
 *   host's ask id; its `ctx.requestClient` promise here is never resolved
 *   (the answer goes to the host from whichever front end takes it), only
 *   rejected when the ask stops (the host withdrew it, the call stopped);
 * - `tasks/update` on any front end takes each answered question in one
 *   step (one winner: a second answer to it, or one after the expiry, finds
 *   it gone and is ignored, as the extension says of keys not outstanding)
 *   and sends the answer to the host in that same step;
 * - every front end's sweep looks for tasks whose wait ran out; one wins
 *   each, and in that same step cancels the task's job by the job's
 *   compare-and-set (the one `tasks/cancel` goes through) and, if that won,
 *   settles the task `cancelled`. So the wait ends once, whichever front end
 *   sees it first, even when the front end that relayed the question is gone.
 *
 * The `tasksInputRequired` gauge counts only the in-memory path (./task-inputs.ts):
 * here a task waits in the store, not on one front end.
 */
import type { ClientRequestHandler } from '../backend/backend.js';
import { abortableAsk, CAPABILITY, undeclared, type InputRequest } from '../asks/questions.js';
import { responsesProblem } from '../asks/retry.js';
import type { ClientRequestMethod } from '../stages/tool.js';
import { cancelledAnswer } from './answer.js';
import type { TaskCounters } from './counters.js';
import type { TaskAnswer } from './store.js';
import { TaskInputError } from './errors.js';
import type { TaskJobs } from './task-jobs.js';

/** One outstanding question as the shared store has it. */
export interface SharedQuestion extends InputRequest {
  readonly key: string;
  /** The worker host's id of the ask. */
  readonly relayId: string;
  /** Its text as stored: it is taken only if still that. */
  readonly stored: string;
}

/** What taking one question found: sent to the host, taken but its job stopped, already gone, or the task ended / not the owner's. */
export type SharedClaim = 'sent' | 'stopped' | 'taken' | 'settled' | 'unknown';

/** Questions of tasks kept where every front end of a cluster reaches them; see the module comment. */
export interface SharedTaskInputs {
  /** Keeps a question of the owner's task; its key and stored text, or undefined if the task waits for nothing any more. */
  ask(
    owner: string,
    taskId: string,
    capability: string,
    question: {
      readonly method: ClientRequestMethod;
      readonly params: Record<string, unknown>;
      readonly relayId: string;
    },
    waitMs: number,
    statusMessage: string,
  ): Promise<{ key: string; stored: string } | undefined>;
  /** Removes a question this front end kept, if it is still there as stored. */
  withdraw(taskId: string, key: string, stored: string): Promise<boolean>;
  /** The task's outstanding questions, oldest first. */
  questions(taskId: string): Promise<SharedQuestion[]>;
  /** Takes one question with its answer, which reaches the host in the same step. */
  claim(
    owner: string,
    taskId: string,
    question: SharedQuestion,
    response: Record<string, unknown>,
  ): Promise<SharedClaim>;
  /** Tasks whose wait ran out. */
  due(): Promise<string[]>;
  /**
   * Takes a task's expired wait (one winner) and, in the same step, cancels
   * its job by the job's compare-and-set and settles the task `cancelled`
   * with `answer` and the status message for the wait the asking front end
   * set (the winner's own when unknown): the owner if it did, undefined otherwise.
   */
  expire(
    taskId: string,
    statusMessage: (waitMs: number | undefined) => string,
    answer: TaskAnswer,
  ): Promise<string | undefined>;
}

const WAITING = 'Waiting for the client: tasks/get shows inputRequests, tasks/update answers them.';

/** The shared counterpart of `TaskInputs` (./task-inputs.ts), the same methods. */
export class SharedInputs {
  private readonly sweeper: NodeJS.Timeout;
  private sweeping = false;

  constructor(
    private readonly jobs: TaskJobs,
    private readonly counters: TaskCounters,
    /** How long a task waits in `input_required` before it is cancelled. */
    readonly waitMs: number,
    private readonly shared: SharedTaskInputs,
  ) {
    if (!Number.isInteger(waitMs) || waitMs < 1)
      throw new RangeError(`input wait must be a positive integer of ms (got ${waitMs})`);
    // Often enough that a wait ends close to its time, seldom enough to cost nothing.
    this.sweeper = setInterval(() => void this.sweep(), Math.min(1000, Math.max(50, Math.floor(waitMs / 4))));
    this.sweeper.unref();
  }

  /** The job's `ctx.requestClient` for the owner's task (see `TaskInputs.requester`). */
  requester(owner: string, taskId: string, capabilities: Readonly<Record<string, unknown>>): ClientRequestHandler {
    return (method, params, signal, relayId) => {
      const refused = undeclared(method, capabilities, 'the clientCapabilities of the request that created this task');
      if (refused) return Promise.reject(refused);
      const stopped = `${method} not needed: the task stopped`;
      if (signal.aborted) return Promise.reject(new Error(stopped));
      if (relayId === undefined)
        return Promise.reject(new Error(`${method}: this task's question came without the worker host's ask id`));
      // Never answered here (the answer goes to the host from whichever front end takes it): only refused or stopped.
      let kept: { key: string; stored: string } | undefined;
      const withdraw = () => void (kept && this.shared.withdraw(taskId, kept.key, kept.stored).catch(() => undefined));
      return abortableAsk(
        signal,
        stopped,
        (_answer, refuse) =>
          void this.shared
            .ask(owner, taskId, CAPABILITY[method], { method, params, relayId }, this.waitMs, WAITING)
            .then(
              (placed) => {
                if (!placed) return refuse(new Error(stopped));
                kept = placed;
                if (signal.aborted) withdraw();
              },
              () => refuse(new Error(`${method} was not asked: the shared task store failed`)),
            ),
        () => {
          withdraw();
          return true;
        },
      );
    };
  }

  /** The task's outstanding questions (`inputRequests`), or undefined if it has none. */
  async inputRequests(taskId: string): Promise<Record<string, InputRequest> | undefined> {
    const questions = await this.shared.questions(taskId);
    if (questions.length === 0) return undefined;
    return Object.fromEntries(
      questions.map((q): [string, InputRequest] => [q.key, { method: q.method, params: q.params }]),
    );
  }

  /** `tasks/update` (see `TaskInputs.answer`): each answered question is taken once, on whichever front end. */
  async answer(
    owner: string,
    taskId: string,
    status: string,
    responses: Readonly<Record<string, unknown>>,
  ): Promise<void> {
    const notWaiting = () =>
      new TaskInputError(
        `task ${JSON.stringify(taskId)} is not waiting for input (status '${status}'): tasks/update answers the inputRequests of an input_required task`,
      );
    const questions = status === 'input_required' ? await this.shared.questions(taskId) : [];
    if (questions.length === 0) throw notWaiting();
    const matched = questions.filter((q) => responses[q.key] !== undefined);
    if (matched.length === 0) return; // the extension: keys not outstanding are ignored
    const problem = responsesProblem(
      new Map<string, ClientRequestMethod>(matched.map((q) => [q.key, q.method])),
      responses,
    );
    if (problem !== undefined) throw new TaskInputError(problem);
    const found: SharedClaim[] = [];
    for (const q of matched)
      found.push(await this.shared.claim(owner, taskId, q, responses[q.key] as Record<string, unknown>));
    if (found.includes('sent')) return this.counters.updated();
    // Taken first by another answer (or the expiry): ignored as a key no longer outstanding. A task that ended meanwhile is not waiting.
    if (found.every((f) => f !== 'taken')) throw notWaiting();
  }

  /** The task's job ended: its questions went with the task's settle. */
  ended(_taskId: string): void {}

  /** Stops the sweep. */
  close(): void {
    clearInterval(this.sweeper);
  }

  private async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      for (const taskId of await this.shared.due()) {
        let reason = '';
        const owner = await this.shared.expire(
          taskId,
          (waitMs) =>
            (reason = `The task was cancelled: no input within ${waitMs ?? this.waitMs} ms (--input-wait-ms).`),
          cancelledAnswer(taskId),
        );
        if (owner === undefined) continue;
        this.counters.inputWaitExpired();
        // Settled already, with the cancel: this only counts it where the task's job runs, if that is here.
        await this.jobs.settle(owner, taskId, 'cancelled', cancelledAnswer(taskId), reason);
      }
    } catch {
      // The store is away: the next sweep looks again.
    } finally {
      this.sweeping = false;
    }
  }
}
