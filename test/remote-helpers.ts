/** Worker-host and front-end processes for the multi-host tests (a real redis-server comes from redis-helpers.ts). */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Redis } from 'ioredis';
import { CLI, RawServer, stdioClient, until, type WiredClient } from './helpers.js';

/** A `mcp-cancel-pool worker` subprocess. */
export interface HostProcess {
  readonly id: string;
  readonly child: ChildProcessWithoutNullStreams;
  stderr(): string;
  /** Its counters, from its liveness key (refreshed every second). */
  stats(redis: Redis): Promise<Record<string, number>>;
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/** Where a process finds Redis: a URL (given as `--redis`), or the flags themselves (e.g. `--redis-sentinels ...`). */
export type RedisAt = string | readonly string[];
const redisArgs = (at: RedisAt): string[] => (typeof at === 'string' ? ['--redis', at] : [...at]);

export async function startHost(url: RedisAt, queue: string, args: string[] = []): Promise<HostProcess> {
  const child = spawn(process.execPath, [CLI, 'worker', ...redisArgs(url), '--queue', queue, ...args], {
    stdio: 'pipe',
  });
  let stderr = '';
  const id = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker host did not start: ${stderr}`)), 60_000); // a bound on a hang
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      const m = /host (\S+) serving queue/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`worker host exited with ${code}: ${stderr}`)));
  });
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const end = async (signal: NodeJS.Signals) => {
    if (gone()) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    await exited;
  };
  return {
    id,
    child,
    stderr: () => stderr,
    async stats(redis) {
      const text = await redis.get(`mcp:${queue}:host:${id}`);
      return text ? (JSON.parse(text) as Record<string, number>) : {};
    },
    kill: () => end('SIGKILL'),
    stop: () => end('SIGTERM'),
  };
}

/** An SDK client on a `serve --redis` front end over stdio, once the front end is on Redis. */
export async function frontEnd(url: string, queue: string, args: string[] = []): Promise<WiredClient> {
  const w = await stdioClient(['--redis', url, '--queue', queue, ...args]);
  // The first call may come before the front end has connected: wait until a trivial one goes through.
  await until(
    async () => {
      const r = await w.client.callTool({ name: 'spin', arguments: { ms: 0 } });
      return r.isError !== true;
    },
    60_000,
    'the front end on Redis',
  );
  return w;
}

/** Every key of the multi-host state and BullMQ's job keys of a queue, for "nothing left behind" checks. */
export async function leftovers(
  redis: Redis,
  queue: string,
): Promise<{ jobStates: number; waiting: number; active: number; delayed: number; completed: number; failed: number }> {
  const [jobStates, waiting, active, delayed, completed, failed] = await Promise.all([
    redis.keys(`mcp:${queue}:job:*`).then((k) => k.length),
    redis.llen(`bull:${queue}:wait`),
    redis.llen(`bull:${queue}:active`),
    redis.zcard(`bull:${queue}:delayed`),
    redis.zcard(`bull:${queue}:completed`),
    redis.zcard(`bull:${queue}:failed`),
  ]);
  return { jobStates, waiting, active, delayed, completed, failed };
}

/** Nothing of ours left, as {@link leftovers} counts it. */
export const NO_LEFTOVERS = { jobStates: 0, waiting: 0, active: 0, delayed: 0, completed: 0, failed: 0 } as const;

/**
 * {@link leftovers} once they are all zero, or as they stand after `ms`: a
 * host's counters drop when its outcome is decided, and BullMQ's own
 * bookkeeping (the active job moved out, removed) follows a few Redis round
 * trips later, which a loaded machine stretches. Assert the returned value.
 */
export async function settledLeftovers(
  redis: Redis,
  queue: string,
  ms = 30_000,
): Promise<Awaited<ReturnType<typeof leftovers>>> {
  let left = await leftovers(redis, queue);
  const none = (l: typeof left) => Object.values(l).every((n) => n === 0);
  await until(async () => none((left = await leftovers(redis, queue))), ms, 'nothing of ours left in Redis').catch(
    () => undefined,
  );
  return left;
}

/** A raw-JSON-RPC front end (`serve --redis`), initialized and on Redis. */
export async function rawFrontEnd(url: RedisAt, queue: string, args: string[] = []): Promise<RawServer> {
  const raw = new RawServer([...redisArgs(url), '--queue', queue, ...args]);
  await initializeRaw(raw);
  await until(
    async () => {
      const id = `ready-${Math.random()}`;
      raw.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'spin', arguments: { ms: 0 } } });
      const m = (await raw.next((x) => x.id === id, 10_000)) as { result?: { isError?: boolean } };
      return m.result !== undefined && m.result.isError !== true;
    },
    60_000,
    'the front end on Redis',
  );
  return raw;
}

/** Sends a tools/call over the raw wire. */
export function call(
  raw: RawServer,
  id: string | number,
  name: string,
  args: Record<string, unknown>,
  progressToken?: string,
): void {
  raw.send({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: args, ...(progressToken !== undefined && { _meta: { progressToken } }) },
  });
}

/** Sends notifications/cancelled. */
export function cancel(raw: RawServer, id: string | number): void {
  raw.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'test' } });
}

/** Responses on the raw wire for this id. */
export function responsesFor(raw: RawServer, id: string | number): Record<string, unknown>[] {
  return (raw.lines as Record<string, unknown>[]).filter((m) => m.id === id && ('result' in m || 'error' in m));
}

/** The initialize handshake, with room for a loaded machine (a front end answers it once it can queue calls). */
export async function initializeRaw(raw: RawServer, ms = 30_000): Promise<void> {
  raw.send({
    jsonrpc: '2.0',
    id: 'init',
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  await raw.next((m) => m.id === 'init', ms);
  raw.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
}
