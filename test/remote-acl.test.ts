/**
 * The first wall around Redis (issue 25): the ACL docs/many-hosts.md gives front ends
 * and worker hosts suffices for calls, progress and cancels, for a worker's
 * questions to the client (a 2025 relay, a 2026 parked call and its retry),
 * and for tasks of both eras with their cancel, with no command denied; and
 * it keeps a user of that ACL out of every other queue's keys. A real
 * redis-server with ACL users, real front-end and host processes, the
 * cluster key on.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawServer, until } from './helpers.js';
import { LineServer } from './line-client.js';
import { modernRequest } from './modern-helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import { call, cancel, rawFrontEnd, responsesFor, startHost, type HostProcess } from './remote-helpers.js';
import { TASK_TOOLS } from './task-wire.js';

const CLIENT_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/client-tools.js', import.meta.url));
const MRTR_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/mrtr-tools.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'remote-acl-'));
const KEY = join(dir, 'cluster.key');
writeFileSync(KEY, `${'a7'.repeat(32)}\n`, { mode: 0o600 });
/** Every front end and the host: the same tools and cluster key. */
const SHARED = ['--cluster-key-file', KEY, '--tools', CLIENT_TOOLS, '--tools', MRTR_TOOLS, '--tools', TASK_TOOLS];

/** The rules of docs/many-hosts.md, for queue `q` (a user per role; today both roles need the same). */
const aclFor = (queue: string) =>
  `~bull:${queue}:* ~mcp:${queue}:* &mcp:${queue}:* +@read +@write +@keyspace +@scripting +@pubsub +@blocking +@transaction +@connection -@dangerous +info +time`.split(
    ' ',
  );
const Q = 'acl';

let redis: RedisProcess;
let admin: Redis;
let host: HostProcess;
let front: RawServer;
const urlOf = (user: string, password: string) => redis.url.replace('redis://', `redis://${user}:${password}@`);

beforeAll(async () => {
  redis = await startRedis();
  admin = redis.client();
  await admin.call('ACL', 'SETUSER', 'mcp-front', 'reset', 'on', '>front-pw', ...aclFor(Q));
  await admin.call('ACL', 'SETUSER', 'mcp-host', 'reset', 'on', '>host-pw', ...aclFor(Q));
  await admin.call('ACL', 'LOG', 'RESET');
  host = await startHost(urlOf('mcp-host', 'host-pw'), Q, ['--threads', '2', ...SHARED]);
  front = await rawFrontEnd(urlOf('mcp-front', 'front-pw'), Q, SHARED);
}, 90_000);
const opened: { kill(): unknown }[] = [];
afterAll(async () => {
  front?.kill();
  for (const o of opened) o.kill();
  await host?.kill();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A 2026 front end over stdio under the front ends' ACL user. */
function front2026(): LineServer {
  const s = new LineServer(['--redis', urlOf('mcp-front', 'front-pw'), '--queue', Q, ...SHARED]);
  opened.push(s.child);
  return s;
}
let n = 0;
/** Sends a 2026 request (the tasks extension and elicitation declared) and waits for its answer. */
async function modern(
  s: LineServer,
  method: string,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const id = `m${n++}`;
  s.send(
    modernRequest(
      id,
      method,
      params,
      { tasks: true },
      {
        'io.modelcontextprotocol/clientCapabilities': {
          elicitation: {},
          extensions: { 'io.modelcontextprotocol/tasks': {} },
        },
      },
    ),
  );
  await until(async () => s.lines.some((m) => m.id === id), 60_000, `the answer to ${method}`);
  const answer = s.lines.find((m) => m.id === id)!;
  if (!answer.result) throw new Error(`${method}: ${JSON.stringify(answer)}; stderr ${s.stderr.slice(-400)}`);
  return answer.result as Record<string, unknown>;
}
/** 2026 tasks/get until the task leaves `working`. */
async function settledTask(s: LineServer, taskId: unknown): Promise<Record<string, unknown>> {
  let task: Record<string, unknown> = {};
  await until(
    async () => ((task = await modern(s, 'tasks/get', { taskId })), task.status !== 'working'),
    60_000,
    'the task to end',
  );
  return task;
}
const textOf = (result: Record<string, unknown>) => (result.content as { text: string }[] | undefined)?.[0]?.text;

describe('the minimal ACL', () => {
  it('suffices: a call with progress is answered, a running call is cancelled and stops on its host, and Redis denied nothing', async () => {
    call(front, 'done', 'spin', { ms: 30, stageMs: 5 }, 'p-done');
    expect((await front.next((m) => m.id === 'done', 30_000)).result).not.toHaveProperty('isError', true);
    call(front, 'stop', 'spin', { ms: 60_000, stageMs: 2 });
    await until(async () => (await front.stats()).running === 1, 30_000, 'the long call running');
    cancel(front, 'stop');
    await until(
      async () => {
        const s = await front.stats();
        return s.inFlight === 0 && s.stopping === 0;
      },
      30_000,
      'the cancelled call stopped on its host',
    );
    expect(responsesFor(front, 'stop')).toEqual([]);
    expect(await admin.call('ACL', 'LOG')).toEqual([]);
  }, 90_000);

  it("suffices for a worker's questions: a 2025 relayed elicitation, a 2026 parked call and its retry; Redis denied nothing", async () => {
    const f = new RawServer(['--redis', urlOf('mcp-front', 'front-pw'), '--queue', Q, ...SHARED]);
    opened.push(f.child);
    f.send({
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: { elicitation: {} },
        clientInfo: { name: 'raw', version: '1' },
      },
    });
    await f.next((m) => m.id === 'init', 60_000);
    f.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    f.send({ jsonrpc: '2.0', id: 'ask', method: 'tools/call', params: { name: 'ask_name', arguments: {} } });
    const question = await f.next((m) => m.method === 'elicitation/create' && m.id !== undefined, 60_000);
    f.send({ jsonrpc: '2.0', id: question.id, result: { action: 'accept', content: { name: 'Ada' } } });
    expect(textOf((await f.next((m) => m.id === 'ask', 60_000)).result as Record<string, unknown>)).toBe('hello, Ada');

    const s = front2026();
    const first = await modern(s, 'tools/call', { name: 'greet_user', arguments: {} });
    expect(first.resultType).toBe('input_required');
    const [key] = Object.keys(first.inputRequests as Record<string, unknown>);
    const done = await modern(s, 'tools/call', {
      name: 'greet_user',
      arguments: {},
      requestState: first.requestState,
      inputResponses: { [key!]: { action: 'accept', content: { name: 'octocat' } } },
    });
    expect(done.resultType).toBe('complete');
    expect(textOf(done)).toMatch(/^hello, octocat/);
    expect(await admin.call('ACL', 'LOG')).toEqual([]);
  }, 150_000);

  it('suffices for tasks of both eras, their results and their cancels; Redis denied nothing', async () => {
    const stopped = (await host.stats(admin)).stopped ?? 0;
    // 2025: a task-augmented call on the raw front end, its tasks/result; a long one cancelled with tasks/cancel.
    front.send({
      jsonrpc: '2.0',
      id: 't1',
      method: 'tools/call',
      params: { name: 'only_task', arguments: { ms: 5 }, task: { ttl: 60_000 } },
    });
    const created = (await front.next((m) => m.id === 't1', 60_000)).result as { task: { taskId: string } };
    front.send({ jsonrpc: '2.0', id: 't1r', method: 'tasks/result', params: { taskId: created.task.taskId } });
    expect(textOf((await front.next((m) => m.id === 't1r', 60_000)).result as Record<string, unknown>)).toBe(
      'only_task spun 5 ms',
    );
    front.send({
      jsonrpc: '2.0',
      id: 't2',
      method: 'tools/call',
      params: { name: 'only_task', arguments: { ms: 600_000 }, task: { ttl: 60_000 } },
    });
    const long = (await front.next((m) => m.id === 't2', 60_000)).result as { task: { taskId: string } };
    await until(async () => (await front.stats()).running === 1, 30_000, 'the 2025 task running on the host');
    front.send({ jsonrpc: '2.0', id: 't2c', method: 'tasks/cancel', params: { taskId: long.task.taskId } });
    expect(((await front.next((m) => m.id === 't2c', 60_000)).result as { status?: string }).status).toBe('cancelled');

    // 2026: the extension's task, read inline with tasks/get; a long one cancelled, its job stopped on the host.
    const s = front2026();
    const task = await modern(s, 'tools/call', { name: 'only_task', arguments: { ms: 5 } });
    expect(task).toMatchObject({ resultType: 'task', status: 'working' });
    expect(await settledTask(s, task.taskId)).toMatchObject({
      status: 'completed',
      result: { content: [{ text: 'only_task spun 5 ms' }] },
    });
    const running = await modern(s, 'tools/call', { name: 'only_task', arguments: { ms: 600_000 } });
    await until(async () => (await host.stats(admin)).running === 1, 30_000, 'the 2026 task running on the host');
    await modern(s, 'tasks/cancel', { taskId: running.taskId });
    expect(await settledTask(s, running.taskId)).toMatchObject({ status: 'cancelled' });
    await until(
      async () => ((await host.stats(admin)).stopped ?? 0) >= stopped + 2,
      30_000,
      'both cancelled tasks stopped on the host',
    );
    expect(await admin.call('ACL', 'LOG')).toEqual([]);
  }, 150_000);

  it('keeps that user out of another queue, and out of admin commands', async () => {
    const stranger = new Redis(urlOf('mcp-front', 'front-pw'), { maxRetriesPerRequest: 1, lazyConnect: true });
    try {
      await stranger.connect();
      await expect(stranger.hgetall('mcp:other:job:1')).rejects.toThrow(/NOPERM/);
      await expect(stranger.call('CONFIG', 'GET', 'requirepass')).rejects.toThrow(/NOPERM/);
      await expect(stranger.flushall()).rejects.toThrow(/NOPERM/);
      await expect(stranger.publish('mcp:other:cancel', 'x')).rejects.toThrow(/NOPERM/);
    } finally {
      stranger.disconnect();
    }
  });
});
