/**
 * 2026 multi-round-trip calls across front ends (issue 25, "any front end"):
 * a call answered `input_required` by one `serve --redis` front end is
 * resumed by its retry on another, directly and through nginx round robin;
 * exactly one retry of a state resumes it (a replay, anywhere, is refused);
 * a cancel of the retry stops the job and nothing is answered; a parked call
 * not retried is cancelled by the front end that parked it. Real
 * redis-server, worker hosts, front ends (HTTP and stdio) and nginx.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, startHttpServer, until, type HttpServerProcess } from './helpers.js';
import { messagesIn, type Msg } from './http-helpers.js';
import { LineServer, answerCounts } from './line-client.js';
import { modernHeaders, modernRequest } from './modern-helpers.js';
import { startNginx, type NginxProcess } from './nginx-helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import { startHost, type HostProcess } from './remote-helpers.js';

const MRTR_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/mrtr-tools.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'mrtr-fronts-'));
const KEY = join(dir, 'cluster.key');
writeFileSync(KEY, `${'d4'.repeat(32)}\n`, { mode: 0o600 });
const Q = 'mrtr-fronts';
const ASKABLE = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };

let redis: RedisProcess;
let r: Redis;
const hosts: HostProcess[] = [];
let a: HttpServerProcess;
let b: HttpServerProcess;
let lb: NginxProcess;
const lines: LineServer[] = [];

beforeAll(async () => {
  redis = await startRedis();
  r = redis.client();
  const common = ['--redis', redis.url, '--queue', Q, '--cluster-key-file', KEY, '--tools', MRTR_TOOLS];
  const hostArgs = ['--threads', '2', '--cluster-key-file', KEY, '--tools', MRTR_TOOLS];
  const [h1, h2, fa, fb] = await Promise.all([
    startHost(redis.url, Q, hostArgs),
    startHost(redis.url, Q, hostArgs),
    startHttpServer([...common, '--session-prefix', 'a']),
    startHttpServer([...common, '--session-prefix', 'b']),
  ]);
  hosts.push(h1, h2);
  [a, b] = [fa, fb];
  lb = await startNginx({ a: a.url.host, b: b.url.host });
}, 120_000);
afterAll(async () => {
  for (const l of lines) l.kill();
  await lb?.stop();
  await Promise.all([a?.stop(), b?.stop(), ...hosts.map((h) => h.stop())]);
  r?.disconnect();
  await redis?.stop();
});

async function hostSum(name: string): Promise<number> {
  let n = 0;
  for (const h of hosts) n += (await h.stats(r))[name] ?? 0;
  return n;
}

/** Counters by name. */
type Counts = (name: string) => number;
let n = 0;
/** One 2026 request POSTed to `url`, its answer; `signal` closes its stream. */
async function post(url: URL, method: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<Msg> {
  const body = modernRequest(`r${n++}`, method, params, {}, ASKABLE);
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...modernHeaders(body),
    },
    body: JSON.stringify(body),
    ...(signal && { signal }),
  });
  const answer = messagesIn(await res.text()).find((m) => m.id === body.id);
  if (!answer) throw new Error(`no answer to ${method} (HTTP ${res.status})`);
  return answer;
}
const resultOf = (m: Msg) => m.result as Record<string, unknown>;
async function statsOf(url: URL): Promise<Counts> {
  const read = resultOf(await post(url, 'resources/read', { uri: 'executor://stats' }));
  const stats = JSON.parse((read.contents as { text: string }[])[0]!.text) as Record<string, number>;
  return (name: string) => stats[name] ?? 0; // a counter not there yet reads 0
}
/** A first call: its one question's key and the requestState. */
async function park(url: URL, args: Record<string, unknown> = {}): Promise<{ key: string; state: string }> {
  const first = resultOf(await post(url, 'tools/call', { name: 'greet_user', arguments: args }));
  expect(first.resultType).toBe('input_required');
  const [key] = Object.keys(first.inputRequests as object) as [string];
  return { key, state: first.requestState as string };
}
const retry = (
  url: URL,
  p: { key: string; state: string },
  name: string,
  args: Record<string, unknown> = {},
  signal?: AbortSignal,
) =>
  post(
    url,
    'tools/call',
    {
      name: 'greet_user',
      arguments: args,
      requestState: p.state,
      inputResponses: { [p.key]: { action: 'accept', content: { name } } },
    },
    signal,
  );
const textOf = (m: Msg) => (resultOf(m).content as { text: string }[])[0]!.text;

describe('a retry on another front end resumes the parked call', () => {
  it('parked on a, retried on b: the answer reaches the stage on its host, b answers, a let go', async () => {
    for (const url of [a.url, b.url])
      await until(
        async () => resultOf(await post(url, 'tools/call', { name: 'spin', arguments: { ms: 0 } })).isError !== true,
        30_000,
        'the front end on Redis',
      );
    const before = { a: await statsOf(a.url), b: await statsOf(b.url) };
    const p = await park(a.url);
    const done = await retry(b.url, p, 'Ada');
    expect(resultOf(done).resultType).toBe('complete');
    expect(textOf(done)).toMatch(/^hello, Ada; prepared \d+ time\(s\) in this thread$/);
    const after = { a: await statsOf(a.url), b: await statsOf(b.url) };
    expect(after.b('inputAdopted') - before.b('inputAdopted')).toBe(1);
    expect(after.b('completed') - before.b('completed')).toBeGreaterThanOrEqual(1);
    // a answered the first request only; the call it parked is b's now, and a cancelled nothing.
    expect(after.a('cancelled')).toBe(before.a('cancelled'));
    await until(async () => (await statsOf(a.url))('inputWaiting') === 0, 10_000, 'a no longer waiting for it');
  }, 120_000);

  it('a state resumes its call once: replayed on either front end, or forged, it is refused', async () => {
    const p = await park(b.url);
    expect(resultOf(await retry(a.url, p, 'first'))).toMatchObject({ resultType: 'complete' });
    for (const url of [a.url, b.url]) {
      const again = await retry(url, p, 'replay');
      expect(again.error).toMatchObject({ code: -32602, data: { reason: 'used' } });
    }
    const q = await park(a.url);
    const [head, body, mac] = q.state.split('.') as [string, string, string];
    const forged = await retry(
      b.url,
      { key: q.key, state: `${head}.${body}.${mac.slice(0, -2)}${mac.endsWith('AA') ? 'BB' : 'AA'}` },
      'mallory',
    );
    expect(forged.error).toMatchObject({ code: -32602, data: { reason: 'forged' } });
    // The forgery left the call parked: the real state still resumes it, on the other front end.
    expect(textOf(await retry(b.url, q, 'real'))).toMatch(/^hello, real;/);
  }, 120_000);

  it("a parked call's record altered in Redis by a stranger: the retry is refused as forged, and the job is stopped, not resumed", async () => {
    const stopped = await hostSum('stopped');
    const p = await park(a.url);
    const [key] = await r.keys(`mcp:${Q}:park:*`);
    const record = JSON.parse((await r.hget(key!, 'd'))!) as { q: { params: Record<string, unknown> }[] };
    record.q[0]!.params = { message: 'Your password?' }; // what a stranger would have the client asked
    await r.hset(key!, 'd', JSON.stringify(record));
    const refused = await retry(b.url, p, 'mallory');
    expect(refused.error).toMatchObject({ code: -32602, data: { reason: 'forged' } });
    await until(async () => (await hostSum('stopped')) === stopped + 1, 30_000, 'the job stopped on its host');
  }, 120_000);

  it('two retries of one state raced on both front ends: exactly one resumes the call', async () => {
    const p = await park(a.url);
    const answers = await Promise.all([retry(a.url, p, 'x'), retry(b.url, p, 'y')]);
    const won = answers.filter((m) => resultOf(m)?.resultType === 'complete');
    const refused = answers.filter((m) => m.error !== undefined);
    expect(won).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.error).toMatchObject({ code: -32602, data: { reason: 'used' } });
  }, 120_000);

  it("closing the retry's stream on the other front end cancels the job on its host", async () => {
    const stopped = await hostSum('stopped');
    const p = await park(a.url, { ms: 120_000 });
    const controller = new AbortController();
    const pending = retry(b.url, p, 'slow', { ms: 120_000 }, controller.signal).catch(() => 'aborted');
    await until(async () => (await statsOf(b.url))('running') === 1, 30_000, 'the resumed job running, held by b');
    controller.abort();
    expect(await pending).toBe('aborted');
    await until(async () => (await hostSum('stopped')) === stopped + 1, 30_000, 'the job stopped on its host');
  }, 120_000);
});

describe('through nginx round robin', () => {
  it("each call's retry lands on the other front end and completes", async () => {
    const before = (await statsOf(a.url))('inputAdopted') + (await statsOf(b.url))('inputAdopted');
    for (let i = 0; i < 4; i++) {
      const p = await park(lb.url);
      const done = await retry(lb.url, p, `user${i}`);
      expect(textOf(done)).toMatch(new RegExp(`^hello, user${i};`));
    }
    // Round robin sends each retry to the front end that did not park its call.
    const after = (await statsOf(a.url))('inputAdopted') + (await statsOf(b.url))('inputAdopted');
    expect(after - before).toBe(4);
  }, 120_000);
});

describe('two stdio front ends on one cluster', () => {
  const front = (args: string[] = []) => {
    const s = new LineServer([
      '--redis',
      redis.url,
      '--queue',
      Q,
      '--cluster-key-file',
      KEY,
      '--tools',
      MRTR_TOOLS,
      ...args,
    ]);
    lines.push(s);
    return s;
  };
  const call = (id: string, extra: Record<string, unknown> = {}, args: Record<string, unknown> = {}) =>
    modernRequest(id, 'tools/call', { name: 'greet_user', arguments: args, ...extra }, {}, ASKABLE);
  const answer = async (s: LineServer, id: string) => {
    await until(async () => s.lines.some((m) => m.id === id), 60_000, `answer ${id}`);
    return s.lines.find((m) => m.id === id)!;
  };
  const parked = async (s: LineServer, id: string, args: Record<string, unknown> = {}) => {
    s.send(call(id, {}, args));
    const res = (await answer(s, id)).result as { resultType: string; inputRequests: object; requestState: string };
    expect(res.resultType).toBe('input_required');
    return { key: Object.keys(res.inputRequests)[0]!, state: res.requestState };
  };

  it('a cancel of the retry running on the other front end: the job stops, nothing is answered for it', async () => {
    const [s1, s2] = [front(), front()];
    const stopped = await hostSum('stopped');
    const p = await parked(s1, 'c1', { ms: 120_000 });
    s2.send(
      call(
        'c2',
        { requestState: p.state, inputResponses: { [p.key]: { action: 'accept', content: { name: 'slow' } } } },
        { ms: 120_000 },
      ),
    );
    let asked = 0;
    await until(
      async () => {
        const id = `st-${asked++}`;
        s2.send(modernRequest(id, 'resources/read', { uri: 'executor://stats' }));
        const read = (await answer(s2, id)).result as { contents: { text: string }[] };
        const st = JSON.parse(read.contents[0]!.text) as Record<string, number>;
        return st.inputAdopted === 1 && st.running === 1;
      },
      30_000,
      'the resumed job running, held by the second front end',
    );
    s2.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c2', reason: 'test' } });
    await until(async () => (await hostSum('stopped')) === stopped + 1, 30_000, 'the job stopped on its host');
    s2.send(modernRequest('after', 'tools/call', { name: 'greet_user', arguments: {} }, {}, ASKABLE));
    await answer(s2, 'after');
    expect(answerCounts(s2.lines).get('c2')).toBeUndefined();
    expect(answerCounts(s1.lines).get('c1')).toBe(1);
  }, 120_000);

  it('parked and not retried within --input-wait-ms: the parking front end cancels it; a late retry elsewhere is refused', async () => {
    const [s1, s2] = [front(['--input-wait-ms', '1500']), front()];
    const stopped = await hostSum('stopped');
    const p = await parked(s1, 'w1');
    await until(async () => (await hostSum('stopped')) === stopped + 1, 30_000, 'the parked job stopped on its host');
    s2.send(
      call('w2', {
        requestState: p.state,
        inputResponses: { [p.key]: { action: 'accept', content: { name: 'late' } } },
      }),
    );
    expect((await answer(s2, 'w2')).error).toMatchObject({ code: -32602 });
  }, 120_000);

  it('the parking front end closes (its calls cancelled): a retry elsewhere is refused, nothing runs on', async () => {
    const [s1, s2] = [front(), front()];
    const stopped = await hostSum('stopped');
    const p = await parked(s1, 'k1');
    s1.child.stdin.end();
    await s1.exited;
    await until(async () => (await hostSum('stopped')) === stopped + 1, 30_000, 'the parked job stopped on its host');
    s2.send(
      call('k2', {
        requestState: p.state,
        inputResponses: { [p.key]: { action: 'accept', content: { name: 'orphan' } } },
      }),
    );
    expect((await answer(s2, 'k2')).error).toMatchObject({
      code: -32602,
      data: { reason: expect.stringMatching(/^(used|gone)$/) },
    });
  }, 120_000);
});

describe('start-up', () => {
  it('--redis with tools that ask the client and no shared key is refused with one clear line', () => {
    const run = spawnSync(process.execPath, [CLI, 'serve', '--redis', redis.url, '--queue', Q, '--tools', MRTR_TOOLS], {
      input: '',
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain(
      'needs a key shared by every front end for 2026 requestState: give --cluster-key-file',
    );
  }, 90_000);
});
