/** A private redis-server for the cross-host scenario, and worker-host processes around it. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';

/** dist-dev/ root (this file is dist-dev/bench/lib/redis.js), where the baselines are. */
const DEV = new URL('../../', import.meta.url);
const devPath = (rel: string) => fileURLToPath(new URL(rel, DEV));

export interface BenchRedis {
  readonly url: string;
  readonly pid: number;
  readonly client: Redis;
  stop(): Promise<void>;
}

export async function startBenchRedis(): Promise<BenchRedis> {
  if (spawnSync('redis-server', ['--version']).error)
    throw new Error('redis-server is not installed: apt-get update && apt-get install -y redis-server');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'bench-redis-'));
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const client = new Redis({ port, host: '127.0.0.1', retryStrategy: (n) => Math.min(n * 50, 500) });
  client.on('error', () => undefined);
  await client.ping();
  return {
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid!,
    client,
    async stop() {
      client.disconnect();
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await gone;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A long-lived process that prints `ready` (a regex) on stderr once it serves. */
export interface Proc {
  readonly child: ChildProcess;
  readonly match: RegExpExecArray;
  stop(): Promise<void>;
}

export async function startProc(args: string[], ready: RegExp): Promise<Proc> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let text = '';
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start:\n${text}`)), 20_000);
    child.stderr.on('data', (d: Buffer) => {
      text = (text + d.toString()).slice(-8192);
      const m = ready.exec(text);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited (${code}):\n${text}`)));
  });
  return {
    child,
    match,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await gone;
      clearTimeout(t);
    },
  };
}

/** `mcp-cancel-pool worker` on `queue`, one thread (and `extra` flags); its id is in `match[1]`. */
export function startWorkerHost(url: string, queue: string, extra: readonly string[] = []): Promise<Proc> {
  return startProc(
    [
      fileURLToPath(import.meta.resolve('#dist/src/cli/main.js')),
      'worker',
      '--redis',
      url,
      '--queue',
      queue,
      '--threads',
      '1',
      ...extra,
    ],
    /host (\S+) serving queue/,
  );
}

/** Baseline (d)'s worker on `queue`. */
export function startBaselineWorker(url: string, queue: string): Promise<Proc> {
  return startProc([devPath('bench/baselines/bullmq-worker.js'), '--redis', url, '--queue', queue], /serving queue/);
}
