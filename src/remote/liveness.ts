/**
 * A process's liveness key: set with a TTL and refreshed well inside it, so
 * the key disappears within the TTL of the process dying (SIGKILL included).
 * Others read it to tell a live front end or host from a dead one.
 *
 * The TTLs are chosen to outlive ordinary stalls: a Redis fork or
 * `DEBUG SLEEP`, a long GC pause, a busy machine, a client paused for a few
 * seconds. A stall shorter than a TTL (less the refresh interval) changes
 * nothing; only a process that has been silent for longer is taken for dead.
 */
import type { ChainableCommander, Redis } from 'ioredis';

/** How long a front end's liveness key outlives its last refresh: its jobs are cancelled on the hosts after this much silence. */
export const FRONT_LIVENESS_TTL_MS = 15_000;
/** How long a host's liveness key outlives its last refresh: its jobs may be failed by their front ends this long plus their lost-host bound after it went silent. */
export const HOST_LIVENESS_TTL_MS = 8000;
/** How often a liveness key is refreshed. */
export const LIVENESS_REFRESH_MS = 1000;

/** Keeps `key` alive until {@link Liveness.stop}. Errors (Redis away) are retried at the next refresh. */
export class Liveness {
  private timer: NodeJS.Timeout | undefined;
  /** Set by pause and stop: a late write of the value must not bring back a key that was let go. */
  private ended = false;
  constructor(
    private readonly redis: Redis,
    readonly key: string,
    readonly ttlMs = FRONT_LIVENESS_TTL_MS,
    private readonly refreshMs = LIVENESS_REFRESH_MS,
    /** The key's value: what others may read about the process (a host puts its counters there). */
    private readonly value: () => string = () => String(process.pid),
    /** Runs with every refresh (a host's beat in the live-hosts set). */
    private readonly beat: () => Promise<unknown> = () => Promise.resolve(),
  ) {}

  /** Sets the key now (awaited, so a caller knows it exists) and keeps refreshing it: one timer, however often it is called. */
  async start(): Promise<void> {
    this.ended = false;
    clearInterval(this.timer);
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), this.refreshMs);
    this.timer.unref();
    await this.refresh();
  }

  /** Refreshes now (e.g. so a counter in the value is seen at once). */
  async refresh(): Promise<void> {
    await Promise.all([this.redis.set(this.key, this.value(), 'PX', this.ttlMs), this.beat()]);
  }

  /**
   * Rewrites the key's value only (a counter in it changed), in `pipe` if
   * given (one socket write with the commands around it), else now. Not the
   * beat: that keeps its timer, and each command written costs the caller a
   * syscall on a path that may be a job's. Nothing once paused or stopped.
   */
  writeValue(pipe?: ChainableCommander): Promise<unknown> {
    if (this.ended) return Promise.resolve();
    if (pipe) {
      pipe.set(this.key, this.value(), 'PX', this.ttlMs);
      return Promise.resolve();
    }
    return this.redis.set(this.key, this.value(), 'PX', this.ttlMs);
  }

  /** Stops refreshing and leaves the key to expire with its TTL. */
  async pause(): Promise<void> {
    this.ended = true;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Stops refreshing and deletes the key (a clean exit needs no TTL wait). */
  async stop(): Promise<void> {
    this.ended = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.redis.del(this.key).catch(() => undefined);
  }
}
