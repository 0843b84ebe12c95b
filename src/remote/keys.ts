/**
 * Redis key and channel names of one queue's multi-host state. Everything of a
 * queue lives under `mcp:<queue>:` (BullMQ's own keys under `bull:<queue>:`).
 */

/** The names for one queue. */
export class RemoteKeys {
  readonly prefix: string;
  constructor(readonly queue: string) {
    this.prefix = `mcp:${queue}`;
  }
  /** The per-job state hash: `s` state, `f` front end, `h` host, `k` the taking host's BullMQ lock token, `o` the outcome. */
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
  /** Pub/sub: progress, logs and outcomes for one front end. */
  frontChannel(frontId: string): string {
    return `${this.prefix}:to:${frontId}`;
  }
  /** A pattern matching every job hash of the queue (for tests and the stats). */
  get jobPattern(): string {
    return `${this.prefix}:job:*`;
  }
}
