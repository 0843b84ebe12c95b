/**
 * An ask of the client whose message the front end missed (its Redis
 * subscriber was away when the worker host published it) is recovered: the
 * host keeps each open ask in the job's hash (`q:<ask>`) in the step that
 * publishes it, and the front end's probe of its running calls finds it
 * (issue 25). The subscriber is taken away on purpose: killed, and kept from
 * reconnecting (maxclients) until the test lets it back: a 2025 session's
 * elicitation, a 2026 plain call's `input_required` round and a 2026 task's
 * question all still reach the client, once; a withdrawn ask never does.
 * Real redis-server, real worker host and front-end processes, the cluster
 * key on.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawServer, until } from './helpers.js';
import { LineServer } from './line-client.js';
import { modernRequest, TASKS } from './modern-helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import { startHost, type HostProcess } from './remote-helpers.js';

const GATED_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/gated-ask-tools.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'remote-ask-recovery-'));
const KEY = join(dir, 'cluster.key');
writeFileSync(KEY, `${'d4'.repeat(32)}\n`, { mode: 0o600 });
const Q = 'recover';
const TOOLS = ['--cluster-key-file', KEY, '--tools', GATED_TOOLS];

let redis: RedisProcess;
let r: Redis;
let spy: Redis;
let host: HostProcess;
/** Every front end, killed only after all tests (one leaving mid-file would free a connection slot; see takeAway). */
const opened: { kill(): unknown }[] = [];
/** Every message on the front ends' channels, as a stranger subscribed to them all sees it. */
const seen: { front: string; m: { j: string; t: string; a?: string } }[] = [];

beforeAll(async () => {
  redis = await startRedis();
  r = redis.client();
  spy = redis.client();
  spy.on('pmessage', (_p: string, channel: string, text: string) =>
    seen.push({ front: channel.slice(`mcp:${Q}:to:`.length), m: JSON.parse(text) as (typeof seen)[number]['m'] }),
  );
  await spy.psubscribe(`mcp:${Q}:to:*`);
  host = await startHost(redis.url, Q, ['--threads', '2', ...TOOLS]);
}, 90_000);
afterAll(async () => {
  for (const o of opened) o.kill();
  await host?.kill();
  await r?.call('CONFIG', 'SET', 'maxclients', '10000').catch(() => undefined);
  spy?.disconnect();
  r?.disconnect();
  await redis?.stop();
});

async function front2025(): Promise<RawServer> {
  const raw = new RawServer(['--redis', redis.url, '--queue', Q, ...TOOLS]);
  opened.push(raw.child);
  raw.send({
    jsonrpc: '2.0',
    id: 'init',
    method: 'initialize',
    params: {
      protocolVersion: '2025-11-25',
      capabilities: { elicitation: {} },
      clientInfo: { name: 'raw', version: '1' },
    },
  });
  await raw.next((m) => m.id === 'init', 60_000);
  raw.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return raw;
}

const textOf = (m: Record<string, unknown>) =>
  (m.result as { content?: { text: string }[] } | undefined)?.content?.[0]?.text ?? JSON.stringify(m);
const message = (t: string, j?: string) =>
  until(async () => seen.some((s) => s.m.t === t && (j === undefined || s.m.j === j)), 60_000, `a '${t}' message`).then(
    () => seen.find((s) => s.m.t === t && (j === undefined || s.m.j === j))!,
  );
/** The take of the first job started after `from` messages: its front end and job id. */
async function takeAfter(from: number): Promise<{ front: string; j: string }> {
  await until(async () => seen.slice(from).some((x) => x.m.t === 'r'), 60_000, 'the take');
  const { front, m } = seen.slice(from).find((x) => x.m.t === 'r')!;
  return { front, j: m.j };
}
const subName = (front: string) => `mcp-front-${front}-sub`;
const clientList = async () => String(await r.call('CLIENT', 'LIST'));
const subscribers = async (front: string) =>
  Number(((await r.call('PUBSUB', 'NUMSUB', `mcp:${Q}:to:${front}`)) as [string, number])[1]);

/**
 * Kills the front end's subscriber and, in the same transaction, lowers
 * maxclients to the connections left: every reconnect is refused until
 * {@link letBack}. Nothing else connects meanwhile (every other connection
 * of the host and front end is open already).
 */
async function takeAway(front: string): Promise<void> {
  const line = (await clientList()).split('\n').find((l) => l.includes(` name=${subName(front)} `));
  expect(line, "the front end's subscriber connection").toBeDefined();
  const id = /\bid=(\d+)/.exec(line!)![1]!;
  const connected = (await clientList()).trim().split('\n').length;
  await r
    .multi()
    .call('CLIENT', 'KILL', 'ID', id)
    .call('CONFIG', 'SET', 'maxclients', String(connected - 1))
    .exec();
  await until(
    async () => !(await clientList()).includes(subName(front)) && (await subscribers(front)) === 0,
    10_000,
    'the subscriber gone',
  );
  // Full: no connection can come in (front ends of earlier tests are left open, so none leaves meanwhile).
  expect((await clientList()).trim().split('\n').length).toBeGreaterThanOrEqual(connected - 1);
}
const letBack = async (front: string) => {
  await r.call('CONFIG', 'SET', 'maxclients', '10000');
  await until(async () => (await subscribers(front)) === 1, 30_000, 'the subscriber back');
};

describe("an ask published while the front end's subscriber was away", () => {
  it('2025: still reaches the client once the subscriber is back; the answer reaches the stage, the call completes', async () => {
    const f = await front2025();
    const gate = join(dir, 'gate-1');
    const from = seen.length;
    f.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask_after_gate', arguments: { gate } } });
    const { front, j } = await takeAfter(from);
    await takeAway(front);
    writeFileSync(gate, '');
    const ask = await message('q', j);
    // Published while nobody of that front end listened: the message itself is lost to it; the job's hash keeps it.
    expect(await subscribers(front)).toBe(0);
    expect(await r.hexists(`mcp:${Q}:job:${j}`, `q:${ask.m.a!}`)).toBe(1);
    await letBack(front);
    const request = await f.next((m) => m.method === 'elicitation/create' && m.id !== undefined, 60_000);
    expect(request.params).toMatchObject({ message: 'What is your name?' });
    f.send({ jsonrpc: '2.0', id: request.id, result: { action: 'accept', content: { name: 'Ada' } } });
    expect(textOf(await f.next((m) => m.id === 1, 60_000))).toBe('hello, Ada');
    expect((f.lines as Record<string, unknown>[]).filter((m) => m.method === 'elicitation/create')).toHaveLength(1); // asked once, though found twice
    await until(
      async () => (await r.exists(`mcp:${Q}:job:${j}`)) === 0,
      10_000,
      "the job's hash retired with its open ask",
    );
  }, 180_000);

  it("an ask withdrawn while the subscriber was away is never shown; its field is gone from the job's hash", async () => {
    const f = await front2025();
    const gate = join(dir, 'gate-2');
    const quit = join(dir, 'quit-2');
    const from = seen.length;
    f.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'ask_then_give_up', arguments: { gate, quit } },
    });
    const { front, j } = await takeAfter(from);
    await takeAway(front);
    writeFileSync(gate, '');
    const ask = await message('q', j);
    expect(await r.hexists(`mcp:${Q}:job:${j}`, `q:${ask.m.a!}`)).toBe(1);
    writeFileSync(quit, '');
    await message('x', j);
    await message('o', j);
    expect(await subscribers(front)).toBe(0);
    expect(await r.hexists(`mcp:${Q}:job:${j}`, `q:${ask.m.a!}`)).toBe(0);
    await letBack(front);
    expect(textOf(await f.next((m) => m.id === 2, 60_000))).toBe('gave up');
    expect((f.lines as Record<string, unknown>[]).filter((m) => m.method === 'elicitation/create')).toEqual([]);
  }, 180_000);

  /** A 2026 front end over stdio. */
  function front2026(args: string[] = []): LineServer {
    const l = new LineServer(['--redis', redis.url, '--queue', Q, ...TOOLS, ...args]);
    opened.push(l.child);
    return l;
  }
  const answerTo = async (l: LineServer, id: string) => {
    await until(async () => l.lines.some((m) => m.id === id), 60_000, `answer ${id}`);
    return l.lines.find((m) => m.id === id)!.result as Record<string, unknown>;
  };

  it('2026, a plain call: its input_required round comes once the subscriber is back, and the retry completes it', async () => {
    const l = front2026();
    const meta = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
    const gate = join(dir, 'gate-3');
    const from = seen.length;
    l.send(modernRequest('m1', 'tools/call', { name: 'ask_after_gate', arguments: { gate } }, {}, meta));
    const { front, j } = await takeAfter(from);
    await takeAway(front);
    writeFileSync(gate, '');
    await message('q', j);
    expect(await subscribers(front)).toBe(0);
    expect(l.lines.some((m) => m.id === 'm1')).toBe(false); // the front end has not heard of the ask
    await letBack(front);
    const first = await answerTo(l, 'm1');
    expect(first).toMatchObject({ resultType: 'input_required' });
    const [key] = Object.keys(first.inputRequests as object);
    l.send(
      modernRequest(
        'm2',
        'tools/call',
        {
          name: 'ask_after_gate',
          arguments: { gate },
          requestState: first.requestState,
          inputResponses: { [key!]: { action: 'accept', content: { name: 'Grace' } } },
        },
        {},
        meta,
      ),
    );
    expect(((await answerTo(l, 'm2')).content as { text: string }[])[0]!.text).toBe('hello, Grace');
  }, 180_000);

  it('2026, a task: its question is kept and shown only once the subscriber is back; tasks/update answers it, the task completes', async () => {
    const l = front2026(['--task-after-ms', '0']);
    const meta = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {}, extensions: { [TASKS]: {} } } };
    const gate = join(dir, 'gate-4');
    let n = 0;
    const ask = async (method: string, params: Record<string, unknown>) => {
      const id = `t${n++}`;
      l.send(modernRequest(id, method, params, {}, meta));
      return answerTo(l, id);
    };
    const from = seen.length;
    const created = await ask('tools/call', { name: 'ask_after_gate', arguments: { gate } });
    expect(created).toMatchObject({ resultType: 'task' });
    const taskId = created.taskId as string;
    const { front, j } = await takeAfter(from);
    await takeAway(front);
    writeFileSync(gate, '');
    await message('q', j);
    expect(await subscribers(front)).toBe(0);
    // Nobody heard the ask, so nobody kept the question: the task is still working (the cmd connection is up).
    expect(await ask('tasks/get', { taskId })).toMatchObject({ status: 'working' });
    await letBack(front);
    let got: Record<string, unknown> = {};
    await until(
      async () => (got = await ask('tasks/get', { taskId })).status === 'input_required',
      60_000,
      'the question shown',
    );
    const [key] = Object.keys(got.inputRequests as object);
    await ask('tasks/update', {
      taskId,
      inputResponses: { [key!]: { action: 'accept', content: { name: 'Hopper' } } },
    });
    await until(
      async () => (got = await ask('tasks/get', { taskId })).status === 'completed',
      60_000,
      'the task completed',
    );
    expect(got).toMatchObject({ result: { content: [{ type: 'text', text: 'hello, Hopper' }] } });
    expect(Object.keys(got.inputRequests ?? {})).toEqual([]);
  }, 180_000);
});
