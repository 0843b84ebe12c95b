/**
 * Front ends behind a real load balancer (issue 25, "any front end"): nginx
 * in front of two `serve --transport http --redis` front ends and two worker
 * hosts, configured as docs/many-hosts.md "Many hosts" says: round robin for 2026
 * requests, a 2025 session routed by its id's front-end prefix
 * (`--session-prefix`). Through it: 2026 calls and closed-stream cancels,
 * 2025 sessions' calls and cancels, and tasks kept in Redis that outlive the
 * front end that created them (SIGKILLed), read and cancelled through the other.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpServer, until, type HttpServerProcess } from './helpers.js';
import { initializeBody, messagesIn, post as post2025, type Msg } from './http-helpers.js';
import { modernHeaders, modernRequest } from './modern-helpers.js';
import { startNginx, type NginxProcess } from './nginx-helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import { startHost, type HostProcess } from './remote-helpers.js';
import { TASK_TOOLS } from './task-wire.js';

const Q = 'nginx';
let redis: RedisProcess;
let r: Redis;
const hosts: HostProcess[] = [];
let a: HttpServerProcess;
let b: HttpServerProcess;
let lb: NginxProcess;

beforeAll(async () => {
  redis = await startRedis();
  r = redis.client();
  const common = ['--redis', redis.url, '--queue', Q, '--tools', TASK_TOOLS];
  const [h1, h2, fa, fb] = await Promise.all([
    startHost(redis.url, Q, ['--threads', '1', '--tools', TASK_TOOLS]),
    startHost(redis.url, Q, ['--threads', '1', '--tools', TASK_TOOLS]),
    startHttpServer([...common, '--session-prefix', 'a']),
    startHttpServer([...common, '--session-prefix', 'b']),
  ]);
  hosts.push(h1, h2);
  [a, b] = [fa, fb];
  lb = await startNginx({ a: a.url.host, b: b.url.host });
}, 90_000);
afterAll(async () => {
  await lb?.stop();
  await Promise.all([a?.stop(), b?.stop(), ...hosts.map((h) => h.stop())]);
  await redis?.stop();
});

/** Both hosts' counters added up. */
async function hostSum(name: string): Promise<number> {
  let n = 0;
  for (const h of hosts) n += (await h.stats(r))[name] ?? 0;
  return n;
}

let n = 0;
/** One 2026 request (the tasks extension declared), POSTed to `url`; its answer. */
async function ask(url: URL, method: string, params: Record<string, unknown>): Promise<Msg> {
  const body = modernRequest(`q${n++}`, method, params, { tasks: true });
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...modernHeaders(body),
    },
    body: JSON.stringify(body),
  });
  const answer = messagesIn(await res.text()).find((m) => m.id === body.id);
  if (!answer) throw new Error(`no answer to ${method} (HTTP ${res.status}); nginx: ${lb.errors().slice(-500)}`);
  return answer;
}
const resultOf = (m: Msg) => m.result as Record<string, unknown>;
async function statsOf(url: URL): Promise<Record<string, number>> {
  const read = resultOf(await ask(url, 'resources/read', { uri: 'executor://stats' }));
  return JSON.parse((read.contents as { text: string }[])[0]!.text) as Record<string, number>;
}
async function completed(url: URL): Promise<number> {
  return (await statsOf(url)).completed ?? 0;
}

describe('through nginx', () => {
  it('2026 calls go round robin to both front ends, each answered from a worker host', async () => {
    await until(
      async () =>
        resultOf(await ask(lb.url, 'tools/call', { name: 'never_task', arguments: { ms: 1 } })).isError !== true,
      30_000,
      'a first call through nginx',
    );
    for (let i = 0; i < 6; i++) {
      expect(resultOf(await ask(lb.url, 'tools/call', { name: 'never_task', arguments: { ms: 1 } }))).toMatchObject({
        content: [{ type: 'text', text: 'never_task spun 1 ms' }],
      });
    }
    expect(await completed(a.url)).toBeGreaterThanOrEqual(3);
    expect(await completed(b.url)).toBeGreaterThanOrEqual(3);
  });

  it('a 2026 call whose stream the client closes is cancelled on its host (the close reaches the front end that holds the stream)', async () => {
    const relayed = await hostSum('cancelsRelayed');
    const controller = new AbortController();
    const body = modernRequest(
      'long',
      'tools/call',
      { name: 'never_task', arguments: { ms: 120_000 } },
      { tasks: true },
    );
    const pending = fetch(lb.url, {
      method: 'POST',
      signal: controller.signal,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...modernHeaders(body),
      },
      body: JSON.stringify(body),
    })
      .then((res) => res.text())
      .catch(() => 'aborted');
    await until(async () => (await hostSum('running')) === 1, 20_000, 'the call running on a host');
    controller.abort();
    expect(await pending).toBe('aborted');
    await until(
      async () => (await hostSum('cancelsRelayed')) === relayed + 1,
      20_000,
      'the cancel relayed to the host',
    );
    await until(async () => (await hostSum('running')) === 0, 20_000, 'the hosts free');
  });

  it('2025 sessions: each stays on the front end named by its id, for its calls and its cancels', async () => {
    const clients: { client: Client; transport: StreamableHTTPClientTransport }[] = [];
    for (let i = 0; i < 2; i++) {
      const transport = new StreamableHTTPClientTransport(lb.url);
      const client = new Client({ name: 'nginx-2025', version: '1.0.0' });
      await client.connect(transport);
      clients.push({ client, transport });
    }
    // Round robin put the two initializes on the two front ends; each id names its own.
    expect(clients.map((c) => c.transport.sessionId!.split('.')[0]).sort()).toEqual(['a', 'b']);
    for (const { client, transport } of clients) {
      for (let i = 0; i < 3; i++) {
        expect(await client.callTool({ name: 'never_task', arguments: { ms: 1 } })).toMatchObject({
          content: [{ type: 'text', text: 'never_task spun 1 ms' }],
        });
      }
      const relayed = await hostSum('cancelsRelayed');
      const controller = new AbortController();
      const call = client
        .callTool({ name: 'never_task', arguments: { ms: 120_000 } }, undefined, { signal: controller.signal })
        .then(
          () => 'answered',
          () => 'aborted',
        );
      await until(
        async () => (await hostSum('running')) === 1,
        20_000,
        `session ${transport.sessionId}'s call running`,
      );
      controller.abort('the test cancels');
      expect(await call).toBe('aborted');
      await until(
        async () => (await hostSum('cancelsRelayed')) === relayed + 1,
        20_000,
        'the notifications/cancelled relayed to the host',
      );
      await until(async () => (await hostSum('running')) === 0, 20_000, 'the hosts free');
      await transport.terminateSession();
      await client.close();
    }
  });

  it('tasks/cancel through B racing the completion of a task made through A: one winner, and both front ends say the same', async () => {
    const seen = { cancelled: 0, completed: 0 };
    for (let i = 0; i < 8; i++) {
      const made = resultOf(await ask(a.url, 'tools/call', { name: 'only_task', arguments: { ms: 150 } }));
      await new Promise((done) => setTimeout(done, 100 + 25 * i));
      const cancel = await ask(b.url, 'tasks/cancel', { taskId: made.taskId });
      const [onA, onB] = [
        resultOf(await ask(a.url, 'tasks/get', { taskId: made.taskId })),
        resultOf(await ask(b.url, 'tasks/get', { taskId: made.taskId })),
      ];
      expect(onA).toEqual(onB);
      // 2026 acknowledges tasks/cancel either way (the extension: a cancel of a terminal task is an idempotent ack);
      // the task's status says who won.
      expect(cancel.error).toBeUndefined();
      expect(resultOf(cancel)).toMatchObject({ resultType: 'complete' });
      if (onA.status === 'completed') {
        // Completion won in Redis first: the task has its result.
        expect(onA).toMatchObject({
          status: 'completed',
          result: { content: [{ type: 'text', text: 'only_task spun 150 ms' }] },
        });
        seen.completed++;
      } else {
        expect(onA.status).toBe('cancelled');
        expect(onA).not.toHaveProperty('result');
        seen.cancelled++;
      }
    }
    expect(seen.cancelled + seen.completed).toBe(8);
    console.log(`cross-front-end cancel race: ${seen.cancelled} cancelled, ${seen.completed} completed first`);
    // Each task is counted once, by the front end that created it, whoever settled it; B created none.
    await until(async () => (await statsOf(a.url)).tasksWorking === 0, 20_000, "A's tasks counted terminal");
    expect(await statsOf(a.url)).toMatchObject({
      tasksCreated: 8,
      tasksWorking: 0,
      tasksCancelled: seen.cancelled,
      tasksCompleted: seen.completed,
    });
    expect(await statsOf(b.url)).toMatchObject({
      tasksCreated: 0,
      tasksWorking: 0,
      tasksCancelled: 0,
      tasksCompleted: 0,
    });
    await until(async () => (await hostSum('running')) === 0, 20_000, 'the hosts free');
  });

  it('2026 tasks live in Redis: created through front end A, read and cancelled through B (and nginx) after A was SIGKILLed', async () => {
    const soon = resultOf(await ask(a.url, 'tools/call', { name: 'only_task', arguments: { ms: 4000 } }));
    const long = resultOf(await ask(a.url, 'tools/call', { name: 'only_task', arguments: { ms: 120_000 } }));
    expect(soon).toMatchObject({ resultType: 'task', status: 'working' });
    expect(long).toMatchObject({ resultType: 'task', status: 'working' });
    await until(async () => (await hostSum('running')) === 2, 20_000, 'both tasks running, one on each host');
    // The record is in Redis with the task's ttl (the default, 10 minutes).
    const pttl = await r.pttl(`mcp:${Q}:task:${long.taskId as string}`);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(long.ttlMs as number);
    // While A lives, B reads A's task too: one store.
    expect(resultOf(await ask(b.url, 'tasks/get', { taskId: soon.taskId }))).toMatchObject({
      taskId: soon.taskId,
      status: 'working',
    });
    a.child.kill('SIGKILL');
    await new Promise((done) => a.child.once('exit', done));
    // The job ran on; its host left the outcome in the task record, and B (through nginx: A is gone) settles it.
    let task: Record<string, unknown> = {};
    await until(
      async () => (task = resultOf(await ask(lb.url, 'tasks/get', { taskId: soon.taskId }))).status !== 'working',
      30_000,
      'the task completed',
    );
    expect(task).toMatchObject({
      taskId: soon.taskId,
      status: 'completed',
      result: { content: [{ type: 'text', text: 'only_task spun 4000 ms' }] },
    });
    // The host that ran it counts it done in its next write of the counters (coalesced), maybe after B's answer.
    await until(async () => (await hostSum('running')) === 1, 20_000, 'the finished task off its host');
    const relayed = await hostSum('cancelsRelayed');
    expect(resultOf(await ask(b.url, 'tasks/cancel', { taskId: long.taskId }))).toMatchObject({
      resultType: 'complete',
    });
    // Acknowledged once decided: the next read says cancelled, and the host stops the work.
    expect(resultOf(await ask(lb.url, 'tasks/get', { taskId: long.taskId }))).toMatchObject({
      taskId: long.taskId,
      status: 'cancelled',
    });
    await until(
      async () => (await hostSum('cancelsRelayed')) === relayed + 1,
      20_000,
      'the cancel relayed to the host',
    );
    await until(async () => (await hostSum('running')) === 0, 20_000, 'the hosts free');
    // The caller owns its 2026 tasks: a 2025 session (through nginx, on whichever front end) does not see them.
    const init = await post2025(lb.url, initializeBody());
    const sid = init.headers['mcp-session-id'] as string;
    await post2025(lb.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': sid });
    const legacy = await post2025(
      lb.url,
      { jsonrpc: '2.0', id: 'g25', method: 'tasks/get', params: { taskId: soon.taskId } },
      { 'mcp-session-id': sid },
    );
    expect(messagesIn(legacy.text)[0]!.error).toMatchObject({ code: -32602 });
    // A cancel of a terminal task is acknowledged and changes nothing.
    expect((await ask(lb.url, 'tasks/cancel', { taskId: soon.taskId })).error).toBeUndefined();
    expect(resultOf(await ask(b.url, 'tasks/get', { taskId: soon.taskId }))).toMatchObject({ status: 'completed' });
  });
});
