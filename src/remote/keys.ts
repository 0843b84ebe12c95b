/**
 * Redis key and channel names of one queue's multi-host state. Everything of a
 * queue lives under `mcp:<queue>:` (BullMQ's own keys under `bull:<queue>:`).
 */

/** The job id of a task's job: the same on every front end, so any of them finds the job from the task. */
export function taskJobId(taskId: string): string {
  return `task-${taskId}`;
}

/** The task whose job this is, or undefined for a plain call's job (its id starts with its front end's hex id). */
export function taskOfJob(jobId: string): string | undefined {
  return jobId.startsWith('task-') ? jobId.slice(5) : undefined;
}

/** The names for one queue. */
export class RemoteKeys {
  readonly prefix: string;
  constructor(readonly queue: string) {
    this.prefix = `mcp:${queue}`;
  }
  /** The per-job state hash: `s` state, `f` front end, `h` host, `k` the taking host's BullMQ lock token, `o` the outcome, `r:<ask>` a reply to an ask. */
  job(jobId: string): string {
    return `${this.prefix}:job:${jobId}`;
  }
  /** BullMQ's hash of a job (BullMQ's default prefix `bull`): it exists from the add until the job is finished or removed. */
  bullJob(jobId: string): string {
    return `bull:${this.queue}:${jobId}`;
  }
  /** A front end's liveness key (exists while it runs; expires with a TTL when it dies). */
  front(frontId: string): string {
    return `${this.prefix}:front:${frontId}`;
  }
  /** A worker host's liveness key. */
  host(hostId: string): string {
    return `${this.prefix}:host:${hostId}`;
  }
  /** Sorted set of live worker hosts, each scored with the Redis time its liveness runs out. */
  get hosts(): string {
    return `${this.prefix}:hosts`;
  }
  /** Pub/sub: cancellations for the host that runs the job (`<jobId>` or `<jobId> <token>`). */
  get cancelChannel(): string {
    return `${this.prefix}:cancel`;
  }
  /** Pub/sub: front ends' replies to hosts' asks of the client (JSON, see HostReply in messages.ts; every host listens, the job's host takes it). */
  get replyChannel(): string {
    return `${this.prefix}:reply`;
  }
  /** Pub/sub: progress, logs and outcomes for one front end. */
  frontChannel(frontId: string): string {
    return `${this.prefix}:to:${frontId}`;
  }
  /** A parked 2026 call's record (parking.ts): `j` its job, `d` what a front end needs to resume it (signed). */
  park(wait: string): string {
    return `${this.prefix}:park:${wait}`;
  }
  /** A task record (task-lua.ts): `w` owner, `n` tool, `f` creating front end, `q` order, `j` task JSON, `a` answer JSON, `o` the job's outcome message, `k` the number of its last question key, `i` its --input-wait-ms, `l` the end of its lease (epoch ms; tasks/leases.ts), `t` the creating call's traceparent (tracing only). */
  task(taskId: string): string {
    return `${this.prefix}:task:${taskId}`;
  }
  /** A 2026 task's outstanding questions to the client (task-input-lua.ts): key → signed question with the host's ask id. */
  taskInputs(taskId: string): string {
    return `${this.prefix}:input:${taskId}`;
  }
  /** Tasks with outstanding questions, scored by when their --input-wait-ms runs out (Redis's clock). */
  get inputWaits(): string {
    return `${this.prefix}:inputwait`;
  }
  /** An owner's tasks, scored by creation order (for tasks/list). */
  tasksOf(owner: string): string {
    return `${this.prefix}:tasks:${owner}`;
  }
  /** Working tasks (an owner's, or with no owner all of them), scored by their expiry time: the task limits. */
  working(owner?: string): string {
    return owner === undefined ? `${this.prefix}:working` : `${this.prefix}:working:${owner}`;
  }
  /** The counter that orders tasks. */
  get taskSequence(): string {
    return `${this.prefix}:taskseq`;
  }
  /** A pattern matching every job hash of the queue (for tests and the stats). */
  get jobPattern(): string {
    return `${this.prefix}:job:*`;
  }
}
