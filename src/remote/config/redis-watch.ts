/**
 * What an operator hears about Redis: one line when it becomes unreachable
 * (then one a minute while it stays so), one when it is back, and refused
 * credentials named as such, never as "unreachable". No secret in any line.
 */
import type { Redis } from 'ioredis';
import { describeRedisError, isAuthFailure, type RedisConfig } from './redis-config.js';

/** While Redis stays unreachable, it is said again this often. */
export const UNREACHABLE_REPEAT_MS = 60_000;

export class RedisWatch {
  /** The last connection error, redacted. */
  lastError: string | undefined;
  /** Redis refused the credentials (the last error was an auth failure). */
  authFailed = false;
  private downSince: number | undefined;
  private lastSaid = 0;

  constructor(
    private readonly config: RedisConfig,
    /** What the process does while Redis is away, for the log line. */
    private readonly meanwhile: string,
    private readonly log: (message: string) => void,
  ) {}

  /** Listens to a connection's errors and reconnects. */
  follow(connection: Redis): void {
    connection.on('error', (error: Error) => this.failed(error));
    connection.on('ready', () => this.up());
  }

  /** One line on what is wrong with Redis now. */
  describe(): string {
    if (this.authFailed)
      return `Redis at ${this.config.display} refused the credentials (${this.lastError ?? 'auth failed'})`;
    return `Redis at ${this.config.display} is unreachable${this.lastError ? ` (${this.lastError})` : ''}`;
  }

  private failed(error: Error): void {
    this.lastError = describeRedisError(this.config, error);
    const auth = isAuthFailure(error);
    const now = Date.now();
    if (this.downSince === undefined || auth !== this.authFailed || now - this.lastSaid >= UNREACHABLE_REPEAT_MS) {
      this.authFailed = auth;
      this.downSince ??= now;
      this.lastSaid = now;
      const since = now - this.downSince >= 1000 ? ` for ${Math.round((now - this.downSince) / 1000)} s` : '';
      this.log(`${this.describe()}${since}; ${this.meanwhile}`);
    }
  }

  private up(): void {
    if (this.downSince !== undefined) this.log(`Redis at ${this.config.display} is reachable again`);
    this.downSince = undefined;
    this.authFailed = false;
    this.lastError = undefined;
  }
}
