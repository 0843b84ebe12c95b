/**
 * A real redis-server for the multi-host tests: a free port, a temp dir, no persistence, torn down after.
 * A machine without redis-server fails here, loudly, with the install line (never a skip).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../bench/lib/free-port.js';

export const INSTALL_REDIS = 'apt-get update && apt-get install -y redis-server';

/** A running redis-server owned by one test file. */
export interface RedisProcess {
  readonly port: number;
  readonly url: string;
  readonly child: ChildProcess;
  /** A fresh client (closed by {@link RedisProcess.stop}). */
  client(): Redis;
  /** Kills the server (SIGKILL) and waits until it is gone; the port stays the same for {@link RedisProcess.restart}. */
  kill(): Promise<void>;
  /** Starts a new server on the same port (state is gone: no persistence). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Options for {@link startRedis}. */
export interface RedisStartOptions {
  /** Sets `requirepass`; the url and clients then carry it. */
  readonly password?: string;
  /** More redis-server arguments (e.g. `['--enable-debug-command', 'yes']`). */
  readonly args?: readonly string[];
}

export async function startRedis(options: RedisStartOptions = {}): Promise<RedisProcess> {
  if (spawnSync('redis-server', ['--version']).error) {
    throw new Error(`redis-server is not installed; the multi-host tests need it: ${INSTALL_REDIS}`);
  }
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'mcp-redis-'));
  const clients: Redis[] = [];
  let child!: ChildProcess;
  const launch = async () => {
    const auth = options.password !== undefined ? ['--requirepass', options.password] : [];
    child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        'no',
        ...auth,
        ...(options.args ?? []),
      ],
      { stdio: 'ignore' },
    );
    const probe = new Redis({
      port,
      host: '127.0.0.1',
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      ...(options.password !== undefined && { password: options.password }),
    });
    probe.on('error', () => undefined);
    const end = Date.now() + 10_000;
    for (;;) {
      try {
        await probe.connect();
        await probe.ping();
        probe.disconnect();
        return;
      } catch {
        if (Date.now() > end) throw new Error(`redis-server did not start on port ${port}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };
  await launch();
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
  };
  return {
    port,
    url:
      options.password !== undefined
        ? `redis://:${encodeURIComponent(options.password)}@127.0.0.1:${port}`
        : `redis://127.0.0.1:${port}`,
    get child() {
      return child;
    },
    client() {
      const c = new Redis({
        port,
        host: '127.0.0.1',
        ...(options.password !== undefined && { password: options.password }),
      });
      c.on('error', () => undefined);
      clients.push(c);
      return c;
    },
    kill,
    restart: launch,
    async stop() {
      for (const c of clients) c.disconnect();
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
