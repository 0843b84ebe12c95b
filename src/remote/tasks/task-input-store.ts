/**
 * A 2026 task's questions to the client in Redis, for every front end of the
 * queue (`serve --redis`): the `SharedTaskInputs` of
 * src/tasks/shared-task-inputs.ts, its steps the scripts of
 * task-input-lua.ts. The front end the host asked writes each question
 * (signed with the cluster key, bound to the task, with the host's ask id);
 * any front end shows them in `tasks/get` and takes an answer, which it
 * sends to the host itself, signed as every front end's reply is: the host
 * takes a verified reply to its open ask whoever sent it, so the answer does
 * not depend on the front end that relayed the question being alive.
 *
 * This layer does not see src/tasks/ (the import layers): the shapes below
 * are checked against `SharedTaskInputs` where the command line plugs it in.
 */
import type { Redis } from 'ioredis';
import type { ClientRequestMethod } from '../../stages/tool.js';
import { parseSigned, signed, type ClusterKey } from '../config/cluster-key.js';
import type { JobStates } from '../lua/job-states.js';
import { taskJobId } from '../keys.js';
import { defineScripts, type ScriptCaller } from '../lua/scripts.js';
import { taskWithStatus } from './task-store.js';
import { INPUT_ASK, INPUT_CLAIM, INPUT_DUE, INPUT_EXPIRE, INPUT_WITHDRAW } from '../lua/task-input-lua.js';

/** One outstanding question as read from Redis (verified). */
export interface StoredQuestion {
  readonly key: string;
  readonly method: ClientRequestMethod;
  readonly params: Record<string, unknown>;
  /** The worker host's id of the ask: the reply names it. */
  readonly relayId: string;
  /** The question's text as stored: a claim takes it only if it is still that. */
  readonly stored: string;
}

/** What a claim found (see INPUT_CLAIM). */
export type StoredClaim = 'sent' | 'stopped' | 'taken' | 'settled' | 'unknown';

/** The signed question: `a` the host's ask id. */
interface Question {
  readonly a: string;
  readonly method: ClientRequestMethod;
  readonly params: Record<string, unknown>;
}

const SCRIPTS = {
  mcpInputAsk: [4, INPUT_ASK],
  mcpInputClaim: [4, INPUT_CLAIM],
  mcpInputWithdraw: [3, INPUT_WITHDRAW],
  mcpInputDue: [1, INPUT_DUE],
  mcpInputExpire: [6, INPUT_EXPIRE],
} as const;

/** Tasks expired per look of a sweep (the next sweep takes the rest). */
const DUE_BATCH = 100;

/** Questions of the queue's tasks in Redis; see the module comment. */
export class RedisTaskInputs {
  private readonly call: ScriptCaller<typeof SCRIPTS>;

  constructor(
    private readonly redis: Redis,
    private readonly states: JobStates,
    private readonly clusterKey: ClusterKey | undefined,
  ) {
    this.call = defineScripts(redis, SCRIPTS);
  }

  private get keys() {
    return this.states.keys;
  }

  /**
   * Keeps the host's ask `relayId` of the owner's task as its next question
   * (making the task `input_required` with `statusMessage` if it is the only
   * one, its wait `waitMs`); its key and stored text, or undefined if the
   * task no longer waits for anything (ended, gone, its job stopped).
   */
  async ask(
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
  ): Promise<{ key: string; stored: string } | undefined> {
    const json = await this.taskAs(taskId, 'input_required', statusMessage);
    if (json === undefined) return undefined;
    const body: Question = { a: question.relayId, method: question.method, params: question.params };
    const stored = JSON.stringify(signed(this.clusterKey, 'input', taskId, body));
    const k = this.keys;
    const key = (await this.call(
      'mcpInputAsk',
      k.taskInputs(taskId),
      k.task(taskId),
      k.job(taskJobId(taskId)),
      k.inputWaits,
      owner,
      capability,
      stored,
      json,
      waitMs,
      taskId,
    )) as string;
    return key === '' ? undefined : { key, stored };
  }

  /** The asking front end's withdrawal of a question it wrote (the job stopped asking); true if it was still there. */
  async withdraw(taskId: string, key: string, stored: string): Promise<boolean> {
    const json = (await this.taskAs(taskId, 'working')) ?? '';
    const k = this.keys;
    return (
      (await this.call(
        'mcpInputWithdraw',
        k.taskInputs(taskId),
        k.task(taskId),
        k.inputWaits,
        key,
        stored,
        json,
        taskId,
      )) === 1
    );
  }

  /** The task's outstanding questions, oldest first; one that does not verify against the cluster key is left out. */
  async questions(taskId: string): Promise<StoredQuestion[]> {
    const all = await this.redis.hgetall(this.keys.taskInputs(taskId));
    const found: StoredQuestion[] = [];
    for (const [key, stored] of Object.entries(all)) {
      const q = parse(stored, this.clusterKey, taskId);
      if (q) found.push({ key, method: q.method, params: q.params, relayId: q.a, stored });
    }
    return found.sort((x, y) => numberOf(x.key) - numberOf(y.key));
  }

  /** tasks/update's answer to one question of the owner's task: taken once, and sent to the host in the same step. */
  async claim(
    owner: string,
    taskId: string,
    question: StoredQuestion,
    response: Record<string, unknown>,
  ): Promise<StoredClaim> {
    const jobId = taskJobId(taskId);
    const reply = JSON.stringify(
      signed(this.clusterKey, 'reply', jobId, { j: jobId, a: question.relayId, r: response }),
    );
    const json = (await this.taskAs(taskId, 'working')) ?? '';
    const k = this.keys;
    return (await this.call(
      'mcpInputClaim',
      k.taskInputs(taskId),
      k.task(taskId),
      k.job(jobId),
      k.inputWaits,
      owner,
      question.key,
      question.stored,
      k.replyChannel,
      reply,
      question.relayId,
      json,
      taskId,
    )) as StoredClaim;
  }

  /** Tasks whose --input-wait-ms ran out (Redis's clock). */
  async due(): Promise<string[]> {
    return (await this.call('mcpInputDue', this.keys.inputWaits, DUE_BATCH)) as string[];
  }

  /**
   * Takes the task's expired wait (one front end wins) and, in the same
   * step, cancels its job by the job's CAS and settles the task `cancelled`
   * with `answer` and the `statusMessage` of the wait the asking front end
   * set: the owner if this call did all that,
   * undefined if another front end won, nothing waits, or the job's own end
   * came first.
   */
  async expire(
    taskId: string,
    statusMessage: (waitMs: number | undefined) => string,
    answer: unknown,
  ): Promise<string | undefined> {
    const k = this.keys;
    const [owner, j, wait] = await this.redis.hmget(k.task(taskId), 'w', 'j', 'i');
    const jobId = taskJobId(taskId);
    const waitMs = wait === null ? undefined : Number(wait);
    const json = j
      ? JSON.stringify(taskWithStatus(j, 'cancelled', statusMessage(Number.isFinite(waitMs) ? waitMs : undefined)))
      : '';
    const won = await this.call(
      'mcpInputExpire',
      k.taskInputs(taskId),
      k.task(taskId),
      k.inputWaits,
      k.job(jobId),
      k.working(owner ?? ''),
      k.working(),
      taskId,
      owner ?? '',
      json,
      JSON.stringify(answer),
      k.cancelChannel,
      jobId,
    );
    return won === 'won' && owner ? owner : undefined;
  }

  /** The task's record as JSON in `status` (its immutable fields as stored), or undefined if it is gone. */
  private async taskAs(
    taskId: string,
    status: 'working' | 'input_required',
    statusMessage?: string,
  ): Promise<string | undefined> {
    const j = await this.redis.hget(this.keys.task(taskId), 'j');
    return j === null ? undefined : JSON.stringify(taskWithStatus(j, status, statusMessage));
  }
}

function parse(text: string, key: ClusterKey | undefined, taskId: string): Question | undefined {
  const q = parseSigned<Question>(text, key, 'input', taskId);
  if (
    !q ||
    typeof q.a !== 'string' ||
    typeof q.method !== 'string' ||
    typeof q.params !== 'object' ||
    q.params === null
  )
    return undefined;
  return q;
}

/** A key's number (`elicitation-3` → 3): the order the questions came in. */
function numberOf(key: string): number {
  return Number(key.slice(key.lastIndexOf('-') + 1)) || 0;
}
