/**
 * The Lua scripts of a Redis store as commands of its ioredis connection
 * (ioredis sends a defined command as EVALSHA, falling back to EVAL), and
 * one typed way to call them: each store (job-states.ts, task-store.ts,
 * task-input-store.ts) names its scripts in a table and calls them by name.
 */
import type { Redis } from 'ioredis';

/** Scripts by command name: how many of a call's arguments are keys, and the script. */
export type ScriptTable = Readonly<Record<string, readonly [numberOfKeys: number, lua: string]>>;

/** A call of one of the table's scripts by name: its keys, then its arguments. */
export type ScriptCaller<S extends ScriptTable> = (
  name: keyof S & string,
  ...keysAndArgs: (string | number)[]
) => Promise<unknown>;

/**
 * Defines each of `scripts` on `redis` and returns the caller of them by
 * name. A name already on the connection is kept: another store made on the
 * same connection (e.g. a second `JobStates`) defined it already.
 */
export function defineScripts<S extends ScriptTable>(redis: Redis, scripts: S): ScriptCaller<S> {
  for (const [name, [numberOfKeys, lua]] of Object.entries(scripts)) {
    if (!(name in redis)) redis.defineCommand(name, { numberOfKeys, lua });
  }
  const commands = redis as unknown as Record<string, (...keysAndArgs: (string | number)[]) => Promise<unknown>>;
  return (name, ...keysAndArgs) => commands[name]!(...keysAndArgs);
}
