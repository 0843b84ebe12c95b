/**
 * Tasks kept in Redis for every front end of a queue (`serve --redis`): the
 * `TaskStore` of src/tasks/store.ts, built here on the queue's own Redis
 * connection, its steps the scripts of task-lua.ts. Any front end reads,
 * lists and cancels any task of the caller, and a task outlives the front
 * end that created it: its job keeps running on its host, and the outcome
 * the host leaves in the task record (RESPOND, job-lua.ts) is turned into the
 * task's terminal status by whichever front end reads it first. One winner
 * throughout: the job's state hash decides a cancel against the host's
 * respond; the record's first settle stays.
 *
 * This layer does not see src/tasks/ (the import layers): the types below
 * are the store's shapes, checked against `TaskStore` where the command line
 * plugs the store in, and the outcome-to-task rule is handed in.
 */
import type { CallToolResult, Task } from '@modelcontextprotocol/server';
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { CancelResult, JobOutcome } from '../../backend/backend.js';
import { InvalidCursorError, perOwnerTaskLimit, RedisUnreachableError, totalTaskLimit } from '../../errors.js';
import type { ClusterKey } from '../config/cluster-key.js';
import type { JobStates } from '../lua/job-states.js';
import { taskJobId } from '../keys.js';
import { parseFrontMessage } from '../messages.js';
import { defineScripts, type ScriptCaller } from '../lua/scripts.js';
import { JobStatus } from '../lua/call-states.js';
import { TASK_CANCEL, TASK_CREATE, TASK_DROP, TASK_LEASE, TASK_MARK, TASK_SETTLE } from '../lua/task-lua.js';

type Terminal = 'completed' | 'failed' | 'cancelled';
/** A terminal task's answer (the `TaskAnswer` of src/tasks/store.ts). */
export type StoredAnswer =
  | { readonly kind: 'result'; readonly result: CallToolResult }
  | { readonly kind: 'error'; readonly code: number; readonly message: string };
/** A task and, once terminal, its answer. */
export interface StoredTask {
  readonly task: Task;
  readonly answer?: StoredAnswer;
  /** The creating call's traceparent (`TaskRecord.trace`). */
  readonly trace?: string;
}
/** How a job's outcome makes a task terminal (src/tasks/answer.ts has the rule). */
export interface TaskSettlement {
  readonly status: Terminal;
  readonly answer: StoredAnswer;
  readonly statusMessage?: string;
}

/** Options for {@link RedisTaskStore}: the limits resolved, and the outcome rule. */
export interface RedisTaskStoreOptions {
  readonly maxWorkingTasksPerSession: number;
  readonly maxWorkingTasks: number;
  readonly maxTtlMs: number;
  readonly defaultTtlMs: number;
  readonly pollIntervalMs: number;
  readonly pageSize: number;
  /** The terminal status and answer of a task whose job ended with `outcome`. */
  readonly settlementOf: (outcome: JobOutcome, tool: string, taskId: string) => TaskSettlement;
  /**
   * How often a wait for a task's end (tasks/result, a cancel that lost)
   * re-reads it: its end may be decided by another front end.
   * @default 100
   */
  readonly waitPollMs?: number;
}

const SCRIPTS = {
  mcpTaskCreate: [5, TASK_CREATE],
  mcpTaskSettle: [5, TASK_SETTLE],
  mcpTaskCancel: [6, TASK_CANCEL],
  mcpTaskDrop: [4, TASK_DROP],
  mcpTaskMark: [1, TASK_MARK],
  mcpTaskLease: [1, TASK_LEASE],
} as const;

/**
 * The task whose record's JSON is `j`, now in `status` (updated now, with
 * `statusMessage` in place of any it had): its other fields as stored. The
 * front ends build every status change of a task with it; the Lua scripts only
 * store what they are given.
 */
export function taskWithStatus(j: string, status: Task['status'], statusMessage?: string): Task {
  const { statusMessage: _previous, ...rest } = JSON.parse(j) as Task;
  return {
    ...rest,
    status,
    lastUpdatedAt: new Date().toISOString(),
    ...(statusMessage !== undefined && { statusMessage }),
  };
}

/** The fields of a record read at once (see RemoteKeys.task). */
const FIELDS = ['w', 'n', 'f', 'j', 'a', 'o', 't'] as const;

/** Tasks in Redis, shared by every front end of the queue; see the module comment. */
export class RedisTaskStore {
  /** Tasks created here: their ttl, so the runner's sweep stops their jobs when they expire. */
  private readonly mine = new Map<
    string,
    { readonly owner: string; readonly countedAs: string; readonly expiresAt: number; task: Task }
  >();
  /** 2025 sessions of this front end and the caller each counts as ({@link countAs}). */
  private readonly countedAs = new Map<string, string>();
  private readonly call: ScriptCaller<typeof SCRIPTS>;

  constructor(
    private readonly redis: Redis,
    private readonly states: JobStates,
    private readonly frontId: string,
    private readonly clusterKey: ClusterKey | undefined,
    private readonly options: RedisTaskStoreOptions,
    /** What is wrong with Redis while it is away, for the error a request gets meanwhile. */
    private readonly down: () => string = () => 'Redis is unreachable',
  ) {
    this.call = defineScripts(redis, SCRIPTS);
  }

  /**
   * Refuses a request while Redis is away with a {@link RedisUnreachableError}
   * that says so, instead of ioredis's "Stream isn't writeable" (the command
   * connection queues nothing offline). A connection that queues offline
   * (one a caller made, still connecting) sends the command once it is up.
   */
  private reachable(what: string): void {
    if (this.redis.status !== 'ready' && this.redis.options.enableOfflineQueue === false)
      throw new RedisUnreachableError(`${this.down()}: ${what}; try again when it is back`);
  }

  private get keys() {
    return this.states.keys;
  }

  /**
   * `TaskStore.countAs`: the tasks `owner` (a 2025 session, which lives on this
   * front end) creates from now on count against `caller`'s per-caller limit,
   * in the caller's working set that its 2026 tasks on every front end share.
   */
  countAs(owner: string, caller: string): void {
    this.countedAs.set(owner, caller);
  }

  /** `TaskStore.uncount`: the session is gone; its tasks still working stay counted where they were. */
  uncount(owner: string): void {
    this.countedAs.delete(owner);
  }

  /**
   * The working set a task is counted in: the caller a session counted as when
   * it made the task (only the front end holding the session reaches such a
   * task), else its owner's.
   */
  private workingKey(owner: string, taskId: string): string {
    return this.keys.working(this.mine.get(taskId)?.countedAs ?? owner);
  }

  /** `TaskStore.create`; `tool` names what runs (a task ended elsewhere is settled with it). */
  async create(
    owner: string,
    requestedTtlMs: number | undefined,
    taskId: string = randomUUID(),
    tool = '',
    trace?: string,
  ): Promise<Task> {
    this.reachable('the task was not created');
    const o = this.options;
    const ttl = Math.min(requestedTtlMs ?? o.defaultTtlMs, o.maxTtlMs);
    const now = Date.now();
    const createdAt = new Date(now).toISOString();
    const task: Task = {
      taskId,
      status: 'working',
      createdAt,
      lastUpdatedAt: createdAt,
      ttl,
      pollInterval: o.pollIntervalMs,
    };
    const k = this.keys;
    const countedAs = this.countedAs.get(owner) ?? owner;
    const found = await this.call(
      'mcpTaskCreate',
      k.task(taskId),
      k.tasksOf(owner),
      k.working(countedAs),
      k.working(),
      k.taskSequence,
      owner,
      tool,
      this.frontId,
      JSON.stringify(task),
      ttl,
      now + ttl,
      now,
      o.maxWorkingTasksPerSession,
      o.maxWorkingTasks,
      taskId,
    );
    if (found === 'owner') throw perOwnerTaskLimit(o);
    if (found === 'all') throw totalTaskLimit(o, 'in all sessions of the queue');
    if (found !== 'ok') throw new Error(`task ${taskId} exists already`);
    // Only while tracing (a field of its own, outside the Lua's create): what tasks/* requests on any front end join.
    if (trace !== undefined) await this.redis.hset(k.task(taskId), 't', trace);
    this.mine.set(taskId, { owner, countedAs, expiresAt: now + ttl, task });
    return { ...task };
  }

  /** `TaskStore.get`: a working task whose job has ended (here or elsewhere) is settled first. */
  async get(owner: string, taskId: string): Promise<StoredTask | undefined> {
    this.reachable('the task cannot be read');
    const [w, tool, front, j, a, outcome, t] = await this.redis.hmget(this.keys.task(taskId), ...FIELDS);
    if (w !== owner || j === null || j === undefined) return undefined;
    const task = JSON.parse(j) as Task;
    const traced = typeof t === 'string' ? { trace: t } : undefined;
    if (a) {
      const here = this.mine.get(taskId);
      if (here) here.task = task; // settled by another front end, maybe: the sweep must see it terminal
      return { task, answer: JSON.parse(a) as StoredAnswer, ...traced };
    }
    // An outcome that does not verify is a stranger's write: dropped, the task goes on (the host's own replaces it).
    const recorded = outcome ? this.outcomeOf(outcome) : undefined;
    const ended = recorded ?? (front !== this.frontId ? await this.endedElsewhere(front ?? '', taskId) : undefined);
    if (!ended) return { task, ...traced };
    const { status, answer, statusMessage } = this.options.settlementOf(ended, tool ?? '', taskId);
    await this.settle(owner, taskId, status, answer, statusMessage);
    return this.get(owner, taskId);
  }

  /** The outcome the host left in the record, or undefined if it does not verify (a writer without the cluster key). */
  private outcomeOf(text: string): JobOutcome | undefined {
    const message = parseFrontMessage(text, this.clusterKey);
    return message?.t === 'o' ? message.o : undefined;
  }

  /**
   * A working task created by another front end: while that front end lives
   * it settles the task; once it is gone, the job's state says how it ended.
   */
  private async endedElsewhere(front: string, taskId: string): Promise<JobOutcome | undefined> {
    if ((await this.redis.exists(this.keys.front(front))) === 1) return undefined;
    const probe = await this.states.probe(taskJobId(taskId));
    switch (probe.state) {
      case JobStatus.responding:
        return this.outcomeOf(probe.message);
      case JobStatus.cancelled:
        return { kind: 'cancelled', from: 'running', hardKilled: false };
      case 'gone':
        return {
          kind: 'failed',
          code: 'crash',
          message:
            "the task's job state in Redis is gone and the front end that created it is gone too; the call may or may not have run",
        };
      case JobStatus.failed:
        return {
          kind: 'failed',
          code: 'crash',
          message: 'the worker host running this task was lost and no other host took it over',
        };
      case JobStatus.refused:
        return {
          kind: 'failed',
          code: 'crash',
          message:
            "a worker host refused this task's job: it did not verify against the host's cluster key; it was not run",
        };
      default:
        return undefined; // queued or running: its host answers into the record
    }
  }

  /** `TaskStore.settle`: the first terminal status stays. */
  async settle(
    owner: string,
    taskId: string,
    status: Terminal,
    answer: StoredAnswer,
    statusMessage?: string,
  ): Promise<Task | undefined> {
    const j = await this.redis.hget(this.keys.task(taskId), 'j');
    if (j === null) return undefined;
    const task = taskWithStatus(j, status, statusMessage);
    const k = this.keys;
    const won = await this.call(
      'mcpTaskSettle',
      k.task(taskId),
      this.workingKey(owner, taskId),
      k.working(),
      k.taskInputs(taskId),
      k.inputWaits,
      owner,
      JSON.stringify(task),
      JSON.stringify(answer),
      taskId,
    );
    if (won !== 1) return undefined;
    const here = this.mine.get(taskId);
    if (here) here.task = task;
    return { ...task };
  }

  /** `TaskStore.mark`: `working` ⇄ `input_required` while no settle has won. */
  async mark(
    owner: string,
    taskId: string,
    status: 'working' | 'input_required',
    statusMessage?: string,
  ): Promise<Task | undefined> {
    const j = await this.redis.hget(this.keys.task(taskId), 'j');
    if (j === null) return undefined;
    const task = taskWithStatus(j, status, statusMessage);
    if ((await this.call('mcpTaskMark', this.keys.task(taskId), owner, JSON.stringify(task))) !== 1) return undefined;
    const here = this.mine.get(taskId);
    if (here) here.task = task;
    return { ...task };
  }

  /**
   * tasks/cancel of a task whose job this front end does not hold: the job's
   * state in Redis decides, and a cancel that won settles the task in the same
   * step (task-lua.ts TASK_CANCEL).
   */
  async cancelJob(owner: string, taskId: string, answer: StoredAnswer, statusMessage: string): Promise<CancelResult> {
    this.reachable('the task cannot be cancelled now');
    const jobId = taskJobId(taskId);
    const j = await this.redis.hget(this.keys.task(taskId), 'j');
    if (j === null) return 'unknown';
    const task = taskWithStatus(j, 'cancelled', statusMessage);
    const k = this.keys;
    const [found] = (await this.call(
      'mcpTaskCancel',
      k.task(taskId),
      k.job(jobId),
      this.workingKey(owner, taskId),
      k.working(),
      k.taskInputs(taskId),
      k.inputWaits,
      owner,
      k.cancelChannel,
      jobId,
      JSON.stringify(task),
      JSON.stringify(answer),
      taskId,
    )) as [string, string];
    if (found === JobStatus.queued || found === JobStatus.running) {
      const here = this.mine.get(taskId);
      if (here) here.task = task;
    }
    if (found === JobStatus.queued) return 'cancelled-queued';
    if (found === JobStatus.running) return 'cancelled-running';
    if (found === JobStatus.responding || found === 'settled') return 'too-late';
    return 'unknown';
  }

  /** `TaskStore.list`: the owner's live tasks, oldest first; the cursor is the last one's creation number. */
  async list(owner: string, cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    this.reachable('the tasks cannot be listed');
    let after = 0;
    if (cursor !== undefined) {
      const seq = /^c(\d{1,15})$/.exec(cursor);
      if (!seq) throw new InvalidCursorError(cursor);
      after = Number(seq[1]);
    }
    const size = this.options.pageSize;
    const tasks: Task[] = [];
    let last = after;
    for (;;) {
      const batch = await this.redis.zrangebyscore(
        this.keys.tasksOf(owner),
        `(${last}`,
        '+inf',
        'WITHSCORES',
        'LIMIT',
        0,
        size + 1,
      );
      if (batch.length === 0) return { tasks };
      for (let i = 0; i < batch.length; i += 2) {
        const id = batch[i]!;
        const record = await this.get(owner, id);
        if (!record) {
          void this.redis.zrem(this.keys.tasksOf(owner), id).catch(() => undefined); // expired
          last = Number(batch[i + 1]);
          continue;
        }
        if (tasks.length === size) return { tasks, nextCursor: `c${last}` };
        tasks.push(record.task);
        last = Number(batch[i + 1]);
      }
    }
  }

  /** `TaskStore.waitForTerminal`: re-reads the task until it is terminal, gone, or `signal` aborts. */
  async waitForTerminal(owner: string, taskId: string, signal?: AbortSignal): Promise<StoredTask | undefined> {
    const every = this.options.waitPollMs ?? 100;
    for (;;) {
      const record = await this.get(owner, taskId);
      if (!record || record.answer) return record;
      if (signal?.aborted) return undefined;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, every);
        function done() {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          resolve();
        }
        signal?.addEventListener('abort', done, { once: true });
      });
    }
  }

  /** `TaskStore.count`: the owner's tasks not expired. */
  async count(owner: string): Promise<number> {
    const ids = await this.redis.zrange(this.keys.tasksOf(owner), '0', '-1');
    if (ids.length === 0) return 0;
    return Number(await this.redis.exists(...ids.map((id) => this.keys.task(id))));
  }

  /** `TaskStore.sweep`: Redis expires the records itself; this returns the ones created here whose ttl passed, so their jobs are stopped. */
  async sweep(now = Date.now()): Promise<Task[]> {
    const gone: Task[] = [];
    for (const [id, entry] of this.mine) {
      if (entry.expiresAt > now) continue;
      this.mine.delete(id);
      gone.push({ ...entry.task });
    }
    return gone;
  }

  /** `TaskStore.renewLease`: the lease end in the task's record, moved later atomically (TASK_LEASE). */
  async renewLease(taskId: string, until: number, start: boolean): Promise<void> {
    await this.call('mcpTaskLease', this.keys.task(taskId), until, start ? '1' : '0');
  }

  /** `TaskStore.leaseUntil`: the lease end any front end renewed, if the task has a lease. */
  async leaseUntil(taskId: string): Promise<number | undefined> {
    const l = await this.redis.hget(this.keys.task(taskId), 'l');
    return l === null ? undefined : Number(l);
  }

  /** `TaskStore.dropOwner`: the owner's session is gone (a 2025 session lives on one front end). */
  async dropOwner(owner: string): Promise<Task[]> {
    const k = this.keys;
    const gone: Task[] = [];
    for (const id of await this.redis.zrange(k.tasksOf(owner), '0', '-1')) {
      const j = (await this.call(
        'mcpTaskDrop',
        k.task(id),
        k.tasksOf(owner),
        this.workingKey(owner, id),
        k.working(),
        id,
      )) as string | null;
      this.mine.delete(id);
      if (j) gone.push(JSON.parse(j) as Task);
    }
    return gone;
  }

  /** `TaskStore.close`: forgets what this front end created; the records stay for the other front ends. */
  async close(): Promise<void> {
    this.mine.clear();
  }
}
