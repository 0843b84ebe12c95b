/**
 * 2026 tasks that ask the client, across front ends (issue 25, its last
 * piece): a task's questions (`input_required`) live in Redis beside its
 * record, so any `serve --redis` front end shows them in tasks/get and takes
 * tasks/update's answers, which reach the stage on its worker host even when
 * the front end that relayed the question is gone. One winner per question
 * (two answers raced on two front ends, an answer against the expiry), one
 * expiry across front ends, a cancel anywhere ends the questions, another
 * caller sees none of it. Real redis-server, worker hosts, HTTP front ends
 * and nginx round robin.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, startHttpServer, until, type HttpServerProcess } from './helpers.js';
import { messagesIn, type Msg } from './http-helpers.js';
import { modernHeaders, modernRequest, TASKS } from './modern-helpers.js';
import { startNginx, type NginxProcess } from './nginx-helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import { startHost, type HostProcess } from './remote-helpers.js';

const MRTR_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/mrtr-tools.js', import.meta.url));
const ROUND_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/task-input-tools.js', import.meta.url));
const TOOLS = ['--tools', MRTR_TOOLS, '--tools', ROUND_TOOLS];
const dir = mkdtempSync(join(tmpdir(), 'task-input-'));
const KEY = join(dir, 'cluster.key');
writeFileSync(KEY, `${'e5'.repeat(32)}\n`, { mode: 0o600 });
const TOKEN_FILE = join(dir, 'token');
const TOKEN = 'another-caller-token-0123456789abcdef';
writeFileSync(TOKEN_FILE, `${TOKEN}\n`, { mode: 0o600 });
const Q = 'task-input';
/** A 2026 client that declared the tasks extension and can answer an elicitation. */
const ASKING = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {}, extensions: { [TASKS]: {} } } };
/** The wait of the front end whose tasks are left unanswered (long enough for a loaded machine to see it asking). */
const SHORT_WAIT_MS = 5000;
const SLOW_MS = 60_000;

let redis: RedisProcess;
let r: Redis;
const hosts: HostProcess[] = [];
/** a, b: one caller (no token), a long wait; c: the same caller, a short wait; d: another caller (its own token). */
let a: HttpServerProcess;
let b: HttpServerProcess;
let c: HttpServerProcess;
let d: HttpServerProcess;
let lb: NginxProcess;
const extra: HttpServerProcess[] = [];

const front = (args: string[] = []) =>
  startHttpServer([
    '--redis',
    redis.url,
    '--queue',
    Q,
    '--cluster-key-file',
    KEY,
    ...TOOLS,
    '--task-after-ms',
    '0',
    ...args,
  ]);

beforeAll(async () => {
  redis = await startRedis();
  r = redis.client();
  const hostArgs = ['--threads', '2', '--cluster-key-file', KEY, ...TOOLS];
  const started = await Promise.all([
    startHost(redis.url, Q, hostArgs),
    front(['--input-wait-ms', '600000']),
    front(['--input-wait-ms', '600000']),
    front(['--input-wait-ms', String(SHORT_WAIT_MS)]),
    front(['--input-wait-ms', '600000', '--auth-token-file', TOKEN_FILE]),
  ]);
  hosts.push(started[0]);
  [a, b, c, d] = started.slice(1) as [HttpServerProcess, HttpServerProcess, HttpServerProcess, HttpServerProcess];
  lb = await startNginx({ a: a.url.host, b: b.url.host });
  for (const url of [a.url, b.url, c.url])
    await until(
      async () => result(await post(url, 'tools/call', { name: 'spin', arguments: { ms: 0 } })).isError !== true,
      30_000,
      'the front end on Redis',
    );
}, 120_000);
afterAll(async () => {
  await lb?.stop();
  await Promise.all([
    a?.stop(),
    b?.stop(),
    c?.stop(),
    d?.stop(),
    ...extra.map((e) => e.stop()),
    ...hosts.map((h) => h.stop()),
  ]);
  r?.disconnect();
  await redis?.stop();
});

let n = 0;
/** One 2026 request POSTed to `url` (with `token`, as that caller), its answer. */
async function post(url: URL, method: string, params: Record<string, unknown>, token?: string): Promise<Msg> {
  const body = modernRequest(`r${n++}`, method, params, {}, ASKING);
  const auth: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...modernHeaders(body),
      ...auth,
    },
    body: JSON.stringify(body),
  });
  const answer = messagesIn(await res.text()).find((m) => m.id === body.id);
  if (!answer) throw new Error(`no answer to ${method} (HTTP ${res.status})`);
  return answer;
}
const result = (m: Msg) => m.result as Record<string, unknown>;
const task = async (url: URL, taskId: string) => result(await post(url, 'tasks/get', { taskId }));
const accept = (name: string) => ({ action: 'accept', content: { name } });
const update = (url: URL, taskId: string, key: string, name: string, token?: string) =>
  post(url, 'tasks/update', { taskId, inputResponses: { [key]: accept(name) } }, token);
async function stats(url: URL, token?: string): Promise<Record<string, number>> {
  const read = result(await post(url, 'resources/read', { uri: 'executor://stats' }, token));
  return JSON.parse((read.contents as { text: string }[])[0]!.text) as Record<string, number>;
}
/** A counter summed over the live front ends: each of them sweeps the waits, so any may win an expiry. */
async function sum(name: string): Promise<number> {
  let total = 0;
  for (const [url, token] of [[a.url], [b.url], [c.url], [d.url, TOKEN]] as [URL, string?][])
    total += (await stats(url, token))[name] ?? 0;
  return total;
}
const hostSum = async (name: string) => (await hosts[0]!.stats(r))[name] ?? 0;
/** Polls until `check` holds (the servers decide; this only waits for it). */
async function poll<T>(read: () => Promise<T>, check: (v: T) => boolean, what: string): Promise<T> {
  const end = Date.now() + SLOW_MS;
  for (;;) {
    const v = await read();
    if (check(v)) return v;
    if (Date.now() > end) throw new Error(`never saw ${what}: ${JSON.stringify(v)}`);
    await sleep(50);
  }
}

/** The eliciting tool started as a task on `url`, seen asking on `seenOn`: its id and its one question's key. */
async function asking(url: URL, seenOn: URL, ms = 5): Promise<{ taskId: string; key: string }> {
  const created = result(await post(url, 'tools/call', { name: 'greet_user', arguments: { ms } }));
  expect(created).toMatchObject({ resultType: 'task', status: 'working' });
  const taskId = created.taskId as string;
  const waiting = await poll(
    () => task(seenOn, taskId),
    (t) => t.status !== 'working',
    'the task asking',
  );
  expect(waiting).toMatchObject({ status: 'input_required', statusMessage: expect.stringContaining('tasks/update') });
  const requests = waiting.inputRequests as Record<string, unknown>;
  const keys = Object.keys(requests);
  expect(keys).toHaveLength(1);
  expect(requests[keys[0]!]).toMatchObject({ method: 'elicitation/create', params: { message: 'What is your name?' } });
  return { taskId, key: keys[0]! };
}
const finished = (url: URL, taskId: string) =>
  poll(
    () => task(url, taskId),
    (t) => t.status !== 'input_required' && t.status !== 'working',
    'the task ending',
  );
/** The stage's greeting (the host's threads are shared by every test here, so its per-thread count says nothing). */
const greeting = (name: string) => ({
  status: 'completed',
  result: {
    content: [
      {
        type: 'text',
        text: expect.stringMatching(new RegExp(`^hello, ${name}; prepared \\d+ time\\(s\\) in this thread$`)),
      },
    ],
  },
});

describe('a task asks through one front end, another answers', () => {
  it('created on a, its question shown and answered on b: the stage gets the answer, the task completes on both', async () => {
    const { taskId, key } = await asking(a.url, b.url);
    // The same question on the front end that relayed it, and kept in Redis with the task record's ttl.
    expect((await task(a.url, taskId)).inputRequests).toHaveProperty(key);
    const pttl = await r.pttl(`mcp:${Q}:input:${taskId}`);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual((await r.pttl(`mcp:${Q}:task:${taskId}`)) + 1000);
    const updates = await sum('taskUpdates');
    expect(result(await update(b.url, taskId, key, 'Ada')).resultType).toBe('complete');
    expect(await finished(a.url, taskId)).toMatchObject(greeting('Ada'));
    expect(await task(b.url, taskId)).toMatchObject(greeting('Ada'));
    expect(await sum('taskUpdates')).toBe(updates + 1);
    expect(await r.exists(`mcp:${Q}:input:${taskId}`)).toBe(0);
    // Answered: a later update, on either front end, is refused as for a task that waits for nothing.
    for (const url of [a.url, b.url])
      expect((await update(url, taskId, key, 'again')).error).toMatchObject({
        code: -32602,
        message: expect.stringContaining("not waiting for input (status 'completed')"),
      });
  }, 120_000);

  it("two questions answered on two front ends: input_required until both are, then working on both; the next round's key is new", async () => {
    const gate = join(dir, `gate-${n}`);
    const created = result(await post(a.url, 'tools/call', { name: 'ask_rounds', arguments: { gate } }));
    const taskId = created.taskId as string;
    const both = await poll(
      () => task(b.url, taskId),
      (t) => Object.keys((t.inputRequests as object | undefined) ?? {}).length === 2,
      'both questions shown',
    );
    expect(both).toMatchObject({ status: 'input_required' });
    const [first, second] = Object.keys(both.inputRequests as object) as [string, string];
    expect(first).not.toBe(second);
    // One answered on b: the other still outstanding, on a too.
    expect(result(await update(b.url, taskId, first, 'one')).resultType).toBe('complete');
    const rest = await task(a.url, taskId);
    expect(rest).toMatchObject({ status: 'input_required' });
    expect(Object.keys(rest.inputRequests as object)).toEqual([second]);
    expect(await r.zscore(`mcp:${Q}:inputwait`, taskId)).not.toBeNull();
    // The last one answered on a: nothing outstanding, working on every front end, the wait cleared.
    expect(result(await update(a.url, taskId, second, 'two')).resultType).toBe('complete');
    for (const url of [a.url, b.url]) expect(await task(url, taskId)).toMatchObject({ status: 'working' });
    expect(await task(b.url, taskId)).not.toHaveProperty('inputRequests');
    expect(await r.zscore(`mcp:${Q}:inputwait`, taskId)).toBeNull();
    writeFileSync(gate, '');
    const third = await poll(
      () => task(b.url, taskId),
      (t) => t.status === 'input_required',
      'the third question',
    );
    const [key] = Object.keys(third.inputRequests as object) as [string];
    expect([first, second]).not.toContain(key); // keys are never reused over a task's life
    expect(result(await update(b.url, taskId, key, 'three')).resultType).toBe('complete');
    expect(await finished(a.url, taskId)).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'one / two / three' }] },
    });
  }, 120_000);

  it('through nginx round robin: every poll shows the question, the update lands anywhere, the task completes', async () => {
    const { taskId, key } = await asking(lb.url, lb.url);
    for (let i = 0; i < 4; i++)
      expect(await task(lb.url, taskId)).toMatchObject({
        status: 'input_required',
        inputRequests: { [key]: { method: 'elicitation/create' } },
      });
    expect(result(await update(lb.url, taskId, key, 'Grace')).resultType).toBe('complete');
    expect(await finished(lb.url, taskId)).toMatchObject(greeting('Grace'));
  }, 120_000);

  it('the same answer raced on a and b: the question is taken once, the stage sees one answer', async () => {
    const { taskId, key } = await asking(a.url, a.url);
    const updates = await sum('taskUpdates');
    const [onA, onB] = await Promise.all([update(a.url, taskId, key, 'from-a'), update(b.url, taskId, key, 'from-b')]);
    const acked = [onA, onB].filter((m) => m.error === undefined);
    expect(acked.length).toBeGreaterThanOrEqual(1);
    // The loser read the question gone (refused: nothing outstanding) or lost the take (ignored: the extension's already-answered key).
    for (const m of [onA, onB])
      if (m.error !== undefined)
        expect(m.error).toMatchObject({ code: -32602, message: expect.stringContaining('not waiting for input') });
    const done = await finished(b.url, taskId);
    const text = (done.result as { content: { text: string }[] }).content[0]!.text;
    const who = /^hello, (from-[ab]);/.exec(text)?.[1];
    expect(['from-a', 'from-b']).toContain(who);
    if (acked.length === 1) expect(acked[0]).toBe(who === 'from-a' ? onA : onB);
    // Exactly one reply went to the host.
    expect(await sum('taskUpdates')).toBe(updates + 1);
  }, 120_000);

  it('another caller sees neither the task nor its question, and cannot answer it', async () => {
    const { taskId, key } = await asking(a.url, a.url);
    expect((await post(d.url, 'tasks/get', { taskId }, TOKEN)).error).toMatchObject({ code: -32602 });
    expect((await update(d.url, taskId, key, 'mallory', TOKEN)).error).toMatchObject({ code: -32602 });
    expect((await post(d.url, 'tasks/cancel', { taskId }, TOKEN)).error).toMatchObject({ code: -32602 });
    // Still waiting, its question untouched: its own caller answers it.
    expect(await task(b.url, taskId)).toMatchObject({
      status: 'input_required',
      inputRequests: { [key]: { method: 'elicitation/create' } },
    });
    expect(result(await update(b.url, taskId, key, 'owner')).resultType).toBe('complete');
    expect(await finished(a.url, taskId)).toMatchObject(greeting('owner'));
  }, 120_000);
});

describe('the question outlives the front end that relayed it', () => {
  it('the relaying front end killed (SIGKILL) after the question was shown: b answers it, the task completes', async () => {
    const e = await front(['--input-wait-ms', '600000']);
    extra.push(e);
    await until(
      async () => result(await post(e.url, 'tools/call', { name: 'spin', arguments: { ms: 0 } })).isError !== true,
      30_000,
      'the front end on Redis',
    );
    const { taskId, key } = await asking(e.url, b.url);
    e.child.kill('SIGKILL');
    await new Promise((done) => e.child.once('exit', done));
    expect(await task(b.url, taskId)).toMatchObject({
      status: 'input_required',
      inputRequests: { [key]: { method: 'elicitation/create' } },
    });
    expect(result(await update(b.url, taskId, key, 'Linus')).resultType).toBe('complete');
    expect(await finished(b.url, taskId)).toMatchObject(greeting('Linus'));
    expect(await task(a.url, taskId)).toMatchObject(greeting('Linus'));
  }, 120_000);

  it("a question asked after its relaying front end died reached nobody: once that front end's liveness key is gone the host refuses it, and the task ends with the tool's error", async () => {
    const e = await front(['--input-wait-ms', '600000']);
    extra.push(e);
    await until(
      async () => result(await post(e.url, 'tools/call', { name: 'spin', arguments: { ms: 0 } })).isError !== true,
      30_000,
      'the front end on Redis',
    );
    const gate = join(dir, `gate-${n}`);
    const taskId = result(await post(e.url, 'tools/call', { name: 'ask_rounds', arguments: { gate } }))
      .taskId as string;
    const both = await poll(
      () => task(b.url, taskId),
      (t) => Object.keys((t.inputRequests as object | undefined) ?? {}).length === 2,
      'both questions shown',
    );
    for (const key of Object.keys(both.inputRequests as object))
      expect(result(await update(b.url, taskId, key, key)).resultType).toBe('complete');
    expect(await task(b.url, taskId)).toMatchObject({ status: 'working' });
    e.child.kill('SIGKILL');
    await new Promise((done) => e.child.once('exit', done));
    writeFileSync(gate, ''); // the third question goes to e's channel, where nobody listens
    const final = await finished(b.url, taskId);
    expect(final).toMatchObject({ status: 'completed', result: { isError: true } });
    expect(JSON.stringify(final.result)).toContain('died before it kept this one in Redis');
  }, 120_000);
});

describe('a task no one answers, or cancelled', () => {
  it('no answer within --input-wait-ms: the task is cancelled once (seen on every front end), its job stops on its host', async () => {
    const stopped = await hostSum('stopped');
    const expiredBefore = await sum('taskInputWaitsExpired');
    const created = result(await post(c.url, 'tools/call', { name: 'greet_user', arguments: { ms: 5 } }));
    const taskId = created.taskId as string;
    // Seen asking, unless a loaded machine let the whole wait pass between two polls: then it was asked, and expired.
    const seen = await poll(
      () => task(b.url, taskId),
      (t) => t.status !== 'working',
      'the task asking',
    );
    expect(['input_required', 'cancelled']).toContain(seen.status);
    if (seen.status === 'input_required') expect(Object.keys(seen.inputRequests as object)).toEqual(['elicitation-1']);
    const key = 'elicitation-1';
    const final = await finished(a.url, taskId);
    // c's wait, whichever front end won the expiry (the others wait 600 s).
    const expired = `The task was cancelled: no input within ${SHORT_WAIT_MS} ms (--input-wait-ms).`;
    expect(final).toMatchObject({ status: 'cancelled', statusMessage: expired });
    for (const url of [b.url, c.url])
      expect(await task(url, taskId)).toMatchObject({ status: 'cancelled', statusMessage: expired });
    await until(async () => (await hostSum('stopped')) === stopped + 1, SLOW_MS, 'the job stopped on its host');
    // One front end won the expiry; the question and the wait are gone from Redis; a late answer is refused.
    await until(async () => (await sum('taskInputWaitsExpired')) === expiredBefore + 1, SLOW_MS, 'the expiry counted');
    expect(await r.exists(`mcp:${Q}:input:${taskId}`)).toBe(0);
    expect(await r.zscore(`mcp:${Q}:inputwait`, taskId)).toBeNull();
    expect((await update(b.url, taskId, key, 'late')).error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('not waiting for input'),
    });
    expect(await sum('taskInputWaitsExpired')).toBe(expiredBefore + 1);
  }, 120_000);

  it('tasks/cancel on b while the task asks through a: cancelled, its job stops, its question gone, a later update refused', async () => {
    const stopped = await hostSum('stopped');
    const { taskId, key } = await asking(a.url, a.url);
    expect(result(await post(b.url, 'tasks/cancel', { taskId }))).toMatchObject({ resultType: 'complete' });
    // Settled by b's cancel in its step: a, which holds the job, does not reword it when it hears of the stop.
    for (const url of [a.url, b.url])
      expect(await task(url, taskId)).toMatchObject({
        status: 'cancelled',
        statusMessage: 'The task was cancelled by request.',
      });
    expect(await task(a.url, taskId)).not.toHaveProperty('inputRequests');
    await until(async () => (await hostSum('stopped')) === stopped + 1, SLOW_MS, 'the job stopped on its host');
    expect(await r.exists(`mcp:${Q}:input:${taskId}`)).toBe(0);
    expect(await r.zscore(`mcp:${Q}:inputwait`, taskId)).toBeNull();
    for (const url of [a.url, b.url])
      expect((await update(url, taskId, key, 'late')).error).toMatchObject({
        code: -32602,
        message: expect.stringContaining("not waiting for input (status 'cancelled')"),
      });
  }, 120_000);
});
