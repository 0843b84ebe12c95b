/**
 * Issue 56, task leases: a task the server made out of a plain call (the
 * --task-after-ms window) is cancelled through the compare-exchange when no
 * request has named it for its lease: status `cancelled`, a status message
 * that says why, counted in `executor://stats` and in the cancels metric
 * (source `task_lease`). A client that polls at the advertised interval, even
 * with the machine's cores busy, or that waits in tasks/result, keeps it; a
 * task the client asked for is left to its ttl unless those are leased too.
 * With --redis, a poll at another front end renews the lease in the task's
 * record. Real server processes, real HTTP, real redis-server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sleep, startHttpServer, until, type HttpServerProcess } from './helpers.js';
import { messagesIn } from './http-helpers.js';
import { LineServer } from './line-client.js';
import { modernHeaders, modernRequest } from './modern-helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import { startHost, type HostProcess } from './remote-helpers.js';

const LEASE =
  /^The task was cancelled: nobody asked for it \(tasks\/get, tasks\/result, tasks\/update or tasks\/cancel\) for 2 s, its lease \(--task-lease-ms\)\.$/;

let lines: LineServer[] = [];
let https: HttpServerProcess[] = [];
afterEach(async () => {
  for (const s of lines) s.kill();
  lines = [];
  for (const s of https) await s.stop();
  https = [];
});

/** A 2026 stdio server; `ask` sends one request with the tasks extension declared and waits for its answer. */
function stdio(args: string[]) {
  const s = new LineServer(args);
  lines.push(s);
  let n = 0;
  const ask = async (
    method: string,
    params: Record<string, unknown>,
    ms = 60_000,
  ): Promise<Record<string, unknown>> => {
    const id = `q${n++}`;
    s.send(modernRequest(id, method, params, { tasks: true }));
    const m = await s.answer(id, ms);
    if (m.error) throw new Error(JSON.stringify(m.error));
    return m.result as Record<string, unknown>;
  };
  const stats = async () =>
    JSON.parse(
      ((await ask('resources/read', { uri: 'executor://stats' })).contents as { text: string }[])[0]!.text,
    ) as Record<string, number>;
  return { s, ask, stats };
}

describe('a task the server made', () => {
  it('over HTTP, nobody polls it: cancelled when its lease passes, the work stopped, with a status message, counted in stats and metrics', async () => {
    const server = await startHttpServer([
      '--threads',
      '1',
      '--spare-threads',
      '0',
      '--task-after-ms',
      '100',
      '--task-lease-ms',
      '2000',
    ]);
    https.push(server);
    let n = 0;
    const ask = async (method: string, params: Record<string, unknown>) => {
      const body = modernRequest(`h${n++}`, method, params, { tasks: true });
      const res = await fetch(server.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...modernHeaders(body),
        },
        body: JSON.stringify(body),
      });
      return messagesIn(await res.text()).find((m) => m.id === body.id)!.result as Record<string, unknown>;
    };
    const metric = async () =>
      Number(
        /^mcp_cancel_pool_cancels_total\{source="task_lease"[^}]*\} (\d+)/m.exec(
          await (await fetch(new URL('/metrics', server.url))).text(),
        )?.[1] ?? 0,
      );
    // The Inspector's case: a long call becomes a task, and its client is gone.
    const created = await ask('tools/call', { name: 'spin', arguments: { ms: 600_000 } });
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    await until(async () => (await metric()) === 1, 60_000, 'the lease cancel counted'); // /metrics names no task: no renewal
    const task = await ask('tasks/get', { taskId: created.taskId });
    expect(task).toMatchObject({
      taskId: created.taskId,
      status: 'cancelled',
      statusMessage: expect.stringMatching(LEASE),
    });
    const stats = JSON.parse(
      ((await ask('resources/read', { uri: 'executor://stats' })).contents as { text: string }[])[0]!.text,
    ) as Record<string, number>;
    expect(stats).toMatchObject({ tasksLeaseExpired: 1, tasksCancelled: 1, tasksWorking: 0, inFlight: 0, running: 0 });
  }, 120_000);

  it('over stdio, polled at the advertised pollInterval with both cores busy: never loses its task', async () => {
    const { ask, stats } = stdio([
      '--threads',
      '2',
      '--spare-threads',
      '0',
      '--task-after-ms',
      '100',
      '--task-lease-ms',
      '2000',
    ]);
    await stats();
    const burners: ChildProcess[] = [0, 1].map(() =>
      spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
    );
    try {
      const polled = await ask('tools/call', { name: 'spin', arguments: { ms: 5000 } });
      expect(polled).toMatchObject({ resultType: 'task', pollIntervalMs: 500 });
      let seen: Record<string, unknown>;
      let polls = 0;
      for (;;) {
        seen = await ask('tasks/get', { taskId: polled.taskId });
        polls++;
        if (seen.status !== 'working') break;
        await sleep(polled.pollIntervalMs as number);
      }
      expect(seen).toMatchObject({ status: 'completed' });
      expect(polls).toBeGreaterThan(4); // it was polled across more than the lease
    } finally {
      for (const b of burners) b.kill('SIGKILL');
    }
    expect(await stats()).toMatchObject({ tasksLeaseExpired: 0, tasksCompleted: 1, tasksCancelled: 0 });
  }, 180_000);

  it('a task the client asked for is left to its ttl; with --task-lease-client-tasks it is leased too', async () => {
    for (const [flags, expected] of [
      [[], 'working'],
      [['--task-lease-client-tasks'], 'cancelled'],
    ] as const) {
      const s = new LineServer(['--threads', '1', '--spare-threads', '0', '--task-lease-ms', '2000', ...flags]);
      lines.push(s);
      await s.initialize();
      s.send({
        jsonrpc: '2.0',
        id: 't',
        method: 'tools/call',
        params: { name: 'spin', arguments: { ms: 600_000 }, task: { ttl: 600_000 } },
      });
      const taskId = ((await s.answer('t', 60_000)).result as { task: { taskId: string } }).task.taskId;
      const stats = async (id: string) => {
        s.send({ jsonrpc: '2.0', id, method: 'resources/read', params: { uri: 'executor://stats' } });
        return JSON.parse(
          ((await s.answer(id, 60_000)).result as { contents: { text: string }[] }).contents[0]!.text,
        ) as Record<string, number>;
      };
      if (expected === 'cancelled') {
        let i = 0;
        await until(async () => (await stats(`s${i++}`)).tasksLeaseExpired === 1, 60_000, 'the lease cancel');
      } else {
        await sleep(4000); // twice the lease, unpolled
        expect((await stats('s')).tasksLeaseExpired).toBe(0);
      }
      s.send({ jsonrpc: '2.0', id: 'g', method: 'tasks/get', params: { taskId } });
      expect((await s.answer('g', 60_000)).result).toMatchObject({
        status: expected,
        ...(expected === 'cancelled' && { statusMessage: expect.stringMatching(LEASE) }),
      });
      s.kill();
    }
  }, 180_000);

  it('2025, leased client tasks: a tasks/result that waits longer than the lease keeps its task, which completes', async () => {
    const s = new LineServer([
      '--threads',
      '1',
      '--spare-threads',
      '0',
      '--task-lease-ms',
      '2000',
      '--task-lease-client-tasks',
    ]);
    lines.push(s);
    await s.initialize();
    s.send({
      jsonrpc: '2.0',
      id: 't',
      method: 'tools/call',
      params: { name: 'spin', arguments: { ms: 5000 }, task: { ttl: 600_000 } },
    });
    const taskId = ((await s.answer('t', 60_000)).result as { task: { taskId: string } }).task.taskId;
    s.send({ jsonrpc: '2.0', id: 'r', method: 'tasks/result', params: { taskId } });
    expect((await s.answer('r', 120_000)).result).toMatchObject({
      content: [{ type: 'text', text: expect.stringMatching(/^spun/) }],
    });
    s.send({ jsonrpc: '2.0', id: 's', method: 'resources/read', params: { uri: 'executor://stats' } });
    const stats = JSON.parse(
      ((await s.answer('s', 60_000)).result as { contents: { text: string }[] }).contents[0]!.text,
    ) as Record<string, number>;
    expect(stats).toMatchObject({ tasksLeaseExpired: 0, tasksCompleted: 1 });
  }, 120_000);
});

describe('with --redis', () => {
  let redis: RedisProcess;
  let host: HostProcess;
  const Q = 'leases';
  beforeAll(async () => {
    redis = await startRedis();
    host = await startHost(redis.url, Q, ['--threads', '2']);
  }, 90_000);
  afterAll(async () => {
    await host?.kill();
    await redis?.stop();
  });

  it('polled only at another front end: the lease is renewed in the task record and the task completes; unpolled, the front end holding it cancels it', async () => {
    const common = ['--redis', redis.url, '--queue', Q, '--task-after-ms', '100', '--task-lease-ms', '2000'];
    const a = stdio(common);
    const b = stdio(common);
    await until(
      async () => (await a.ask('tools/call', { name: 'spin', arguments: { ms: 0 } })).isError !== true,
      60_000,
      'front end a on Redis',
    );
    await until(
      async () => (await b.ask('tools/call', { name: 'spin', arguments: { ms: 0 } })).isError !== true,
      60_000,
      'front end b on Redis',
    );
    const kept = await a.ask('tools/call', { name: 'spin', arguments: { ms: 5000 } });
    const dropped = await a.ask('tools/call', { name: 'spin', arguments: { ms: 600_000 } });
    expect(kept).toMatchObject({ resultType: 'task' });
    expect(dropped).toMatchObject({ resultType: 'task' });
    let seen: Record<string, unknown>;
    for (;;) {
      seen = await b.ask('tasks/get', { taskId: kept.taskId });
      if (seen.status !== 'working') break;
      await sleep(500);
    }
    expect(seen).toMatchObject({ status: 'completed' });
    await until(async () => (await a.stats()).tasksLeaseExpired === 1, 60_000, 'the unpolled task cancelled');
    expect(await b.ask('tasks/get', { taskId: dropped.taskId })).toMatchObject({
      status: 'cancelled',
      statusMessage: expect.stringMatching(LEASE),
    });
    expect(await a.stats()).toMatchObject({ tasksLeaseExpired: 1, tasksCancelled: 1 }); // the kept one completed (so may the readiness calls, past the window)
  }, 180_000);
});
