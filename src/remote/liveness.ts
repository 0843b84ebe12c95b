/**
 * A process's liveness key: set with a TTL and refreshed well inside it, so
 * the key disappears within the TTL of the process dying (SIGKILL included).
 * Others read it to tell a live front end or host from a dead one.
 */
import type { Redis } from 'ioredis';

/** How long a liveness key outlives its last refresh. */
export const LIVENESS_TTL_MS = 3000;
/** How often it is refreshed. */
export const LIVENESS_REFRESH_MS = 1000;

/** Keeps `key` alive until {@link Liveness.stop}. Errors (Redis away) are retried at the next refresh. */
export class Liveness {
  private timer: NodeJS.Timeout | undefined;
  constructor(
    private readonly redis: Redis,
    readonly key: string,
    private readonly ttlMs = LIVENESS_TTL_MS,
    private readonly refreshMs = LIVENESS_REFRESH_MS,
    /** The key's value: what others may read about the process (a host puts its counters there). */
    private readonly value: () => string = () => String(process.pid),
  ) {}

  /** Sets the key now (awaited, so a caller knows it exists) and keeps refreshing it. */
  async start(): Promise<void> {
    await this.redis.set(this.key, this.value(), 'PX', this.ttlMs);
    this.timer = setInterval(() => void this.redis.set(this.key, this.value(), 'PX', this.ttlMs).catch(() => undefined), this.refreshMs);
    this.timer.unref();
  }

  /** Refreshes now (e.g. so a counter in the value is seen at once). */
  async refresh(): Promise<void> {
    await this.redis.set(this.key, this.value(), 'PX', this.ttlMs);
  }

  /** Stops refreshing and deletes the key (a clean exit needs no TTL wait). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.redis.del(this.key).catch(() => undefined);
  }
}
