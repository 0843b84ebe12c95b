/**
 * Issue 56, Redis down: `serve --redis` with Redis refusing connections
 * answers at once (initialize, tools/list, a clear error per call and per
 * task), `/readyz` says not ready and why, calls work once Redis is back, and
 * shutdown is its one line and exit 0. Before: initialize waited ~11 s, and
 * closing stdin crashed the process with a stack (`Stream isn't writeable and
 * enableOfflineQueue options is false` from RedisTaskStore.dropOwner), exit 1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, until } from './helpers.js';
import { spawn } from 'node:child_process';
import { initializeBody, messagesIn, post } from './http-helpers.js';
import { LineServer } from './line-client.js';
import { modernHeaders, modernRequest } from './modern-helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import { startHost, type HostProcess } from './remote-helpers.js';

const Q = 'redis-down';
let redis: RedisProcess;
const hosts: HostProcess[] = [];
beforeAll(async () => {
  redis = await startRedis();
  await redis.kill(); // the port stays ours: nothing listens on it until restart()
}, 30_000);
afterAll(async () => {
  for (const h of hosts) await h.kill();
  await redis?.stop();
});

const healthUrl = (stderr: string) => /health and metrics on (http:\/\/\S+)\/healthz/.exec(stderr)?.[1];
const get = async (url: string) => {
  const r = await fetch(url);
  return { status: r.status, text: await r.text() };
};
const text = (m: Record<string, unknown>) =>
  (m.result as { content?: { text: string }[] } | undefined)?.content?.[0]?.text ?? '';
/** The lines of stderr from the shutdown line on. */
const afterShutdown = (stderr: string) => {
  const lines = stderr.trim().split('\n');
  return lines.slice(lines.findIndex((l) => l.includes('shutting down')));
};

describe('serve --redis with Redis down, over stdio', () => {
  it('answers at once with clear errors, says not ready and why, reconnects when Redis is back, and closes with one line and exit 0', async () => {
    const started = Date.now();
    const s = new LineServer(['--redis', redis.url, '--queue', Q, '--health-port', '0']);
    try {
      await s.initialize();
      // The start no longer waits out REDIS_START_WAIT_MS (10 s) once a connection attempt was refused; a bound well under it.
      expect(Date.now() - started).toBeLessThan(8000);
      s.send({ jsonrpc: '2.0', id: 'list', method: 'tools/list' });
      expect(((await s.answer('list', 10_000)).result as { tools: unknown[] }).tools.length).toBeGreaterThan(0);
      s.send({ jsonrpc: '2.0', id: 'call', method: 'tools/call', params: { name: 'spin', arguments: { ms: 1 } } });
      const call = await s.answer('call', 10_000);
      expect(call.result).toMatchObject({ isError: true });
      expect(text(call)).toMatch(/^Redis at redis:\/\/127\.0\.0\.1:\d+ is unreachable: the call was not queued/);
      s.send({
        jsonrpc: '2.0',
        id: 'task',
        method: 'tools/call',
        params: { name: 'spin', arguments: { ms: 1 }, task: { ttl: 60_000 } },
      });
      expect(await s.answer('task', 10_000)).toMatchObject({
        error: {
          code: -32000,
          message: expect.stringMatching(
            /is unreachable \(ECONNREFUSED\): the task was not created; try again when it is back$/,
          ),
        },
      });
      s.send({ jsonrpc: '2.0', id: 'tasks', method: 'tasks/list' });
      expect(await s.answer('tasks', 10_000)).toMatchObject({
        error: { code: -32000, message: expect.stringMatching(/is unreachable.*the tasks cannot be listed/) },
      });

      await s.until(() => healthUrl(s.stderr) !== undefined, 30_000, 'the health line');
      const health = healthUrl(s.stderr)!;
      const ready = await get(`${health}/readyz`);
      expect(ready.status).toBe(503);
      expect(ready.text).toMatch(
        /^not ready: Redis is not connected: redis:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\); calls are refused until it is back\n$/,
      );

      // Redis comes back, with a worker host: the same process takes calls.
      await redis.restart();
      hosts.push(await startHost(redis.url, Q, ['--threads', '1']));
      await until(async () => (await get(`${health}/readyz`)).status === 200, 60_000, 'ready once Redis is back');
      let n = 0;
      await until(
        async () => {
          const id = `back-${n++}`;
          s.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'spin', arguments: { ms: 1 } } });
          const m = (await s.answer(id, 30_000)) as { result?: { isError?: boolean } };
          return m.result !== undefined && m.result.isError !== true;
        },
        60_000,
        'calls working again',
      );

      // Down again, with a task of this session in Redis: closing stdin must not reach Redis for it and crash.
      s.send({
        jsonrpc: '2.0',
        id: 'kept',
        method: 'tools/call',
        params: { name: 'spin', arguments: { ms: 60_000 }, task: { ttl: 60_000 } },
      });
      expect((await s.answer('kept', 30_000)).result).toMatchObject({ task: { status: 'working' } });
      await redis.kill();
      await until(async () => (await get(`${health}/readyz`)).status === 503, 30_000, 'not ready again');
      s.child.stdin.end();
      // The server's own account when it is not 0 (once seen as 1 in a loaded full run, never alone).
      expect(await s.exited, s.stderr.slice(-3000)).toBe(0);
      expect(s.stderr).not.toMatch(/Stream isn't writeable|\n\s+at /);
      expect(afterShutdown(s.stderr)).toEqual([
        '[mcp-cancel-pool] shutting down (stdin closed): cancelled 0 calls in flight and 1 working task',
      ]);
    } finally {
      s.kill();
    }
  }, 180_000);
});

describe('serve --redis with Redis down, over HTTP', () => {
  it('a 2025 session and a 2026 call are answered at once; SIGTERM closes with one line and exit 0', async () => {
    if (redis.child.exitCode === null && redis.child.signalCode === null) await redis.kill();
    const started = Date.now();
    const child = spawn(
      process.execPath,
      [CLI, 'serve', '--transport', 'http', '--port', '0', '--redis', redis.url, '--queue', Q],
      { stdio: 'pipe' },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await until(() => /listening on http/.test(stderr), 30_000, 'listening');
      expect(Date.now() - started).toBeLessThan(8000); // not after the 10 s start wait, as before

      const url = new URL(/listening on (http:\/\/\S+)/.exec(stderr)![1]!);
      const opened = await post(url, initializeBody('open'));
      expect(opened.status).toBe(200);
      const sid = opened.headers['mcp-session-id'] as string;
      const called = await post(
        url,
        { jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { name: 'spin', arguments: { ms: 1 } } },
        { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
      );
      expect(messagesIn(called.text)[0]!.result).toMatchObject({ isError: true });
      expect(JSON.stringify(messagesIn(called.text)[0])).toMatch(/is unreachable: the call was not queued/);
      const modern = modernRequest('m', 'tools/call', { name: 'spin', arguments: { ms: 1 } });
      const answered = await post(url, modern, modernHeaders(modern));
      expect(messagesIn(answered.text)[0]!.result).toMatchObject({ isError: true });
      expect(JSON.stringify(messagesIn(answered.text)[0])).toMatch(/is unreachable: the call was not queued/);
      const ready = await get(url.href.replace(/\/mcp$/, '/readyz'));
      expect(ready.status).toBe(503);
      expect(ready.text).toMatch(/^not ready: Redis is not connected/);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(stderr).not.toMatch(/Stream isn't writeable|\n\s+at /);
      expect(afterShutdown(stderr)).toEqual(['[mcp-cancel-pool] shutting down (SIGTERM)']);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 60_000);
});
