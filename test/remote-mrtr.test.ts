/**
 * A stage's `ctx.requestClient` on a worker host reaches the client through
 * the front end that holds the call (issue 25, the relay): a 2025 session's
 * elicitation and a 2026 multi-round-trip call (`input_required`, retry) with
 * `--redis`. Real redis-server, real worker host and front-end processes, the
 * cluster key on; a stranger on Redis forges a reply and is refused.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawServer, until } from './helpers.js';
import { LineServer, answerCounts, type Wire } from './line-client.js';
import { modernRequest } from './modern-helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import { startHost, type HostProcess } from './remote-helpers.js';

const CLIENT_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/client-tools.js', import.meta.url));
const MRTR_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/mrtr-tools.js', import.meta.url));
const TOOLS = ['--tools', CLIENT_TOOLS, '--tools', MRTR_TOOLS];
const dir = mkdtempSync(join(tmpdir(), 'remote-mrtr-'));
const KEY = join(dir, 'cluster.key');
writeFileSync(KEY, `${'c3'.repeat(32)}\n`, { mode: 0o600 });
const Q = 'relay';
const ASKABLE = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };

let redis: RedisProcess;
let r: Redis;
let host: HostProcess;
const opened: { kill(): unknown }[] = [];

beforeAll(async () => {
  redis = await startRedis();
  r = redis.client();
  host = await startHost(redis.url, Q, ['--threads', '2', '--cluster-key-file', KEY, ...TOOLS]);
}, 90_000);
afterAll(async () => {
  for (const o of opened) o.kill();
  await host?.kill();
  r?.disconnect();
  await redis?.stop();
});

const hostStats = () => host.stats(r);
const textOf = (m: Record<string, unknown>) =>
  (m.result as { content?: { text: string }[] } | undefined)?.content?.[0]?.text ?? JSON.stringify(m);

/** A 2025 front end over stdio whose client can answer elicitation. */
async function front2025(args: string[] = []): Promise<RawServer> {
  const raw = new RawServer(['--redis', redis.url, '--queue', Q, '--cluster-key-file', KEY, ...TOOLS, ...args]);
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

/** The server-to-client request of this method, from line `from` on. */
const requestOf = (raw: RawServer, method: string, from = 0) =>
  raw.next((m) => m.method === method && m.id !== undefined, 60_000, from);

describe("2025: a session's elicitation from a worker host", () => {
  it('reaches the client through the front end, and the answer reaches the stage', async () => {
    const f = await front2025();
    const before = await hostStats();
    f.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask_name', arguments: {} } });
    const ask = await requestOf(f, 'elicitation/create');
    expect(ask.params).toMatchObject({ message: 'What is your name?' });
    f.send({ jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: { name: 'Ada' } } });
    const answer = await f.next((m) => m.id === 1);
    expect(textOf(answer)).toBe('hello, Ada');
    await until(
      async () => (await hostStats()).asksRelayed === (before.asksRelayed ?? 0) + 1,
      10_000,
      'the ask counted on the host',
    );
  }, 120_000);

  it("the client's error reaches the stage as a failed call, not a hang", async () => {
    const f = await front2025();
    f.send({ jsonrpc: '2.0', id: 'e', method: 'tools/call', params: { name: 'ask_name', arguments: {} } });
    const ask = await requestOf(f, 'elicitation/create');
    f.send({ jsonrpc: '2.0', id: ask.id, error: { code: -32603, message: 'user closed the dialog' } });
    const answer = await f.next((m) => m.id === 'e');
    expect((answer.result as { isError?: boolean }).isError).toBe(true);
    expect(textOf(answer)).toContain('user closed the dialog');
  }, 120_000);

  it('a cancel while the client is asked: the ask is cancelled towards the client, nothing is answered, the job stops on the host', async () => {
    const f = await front2025();
    const before = await hostStats();
    f.send({ jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { name: 'ask_name', arguments: {} } });
    const ask = await requestOf(f, 'elicitation/create');
    f.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c', reason: 'test' } });
    // The front end cancels its own request to the client: the job's stop reached the ask.
    await f.next(
      (m) => m.method === 'notifications/cancelled' && (m.params as { requestId?: unknown }).requestId === ask.id,
    );
    await until(
      async () => (await hostStats()).stopped === (before.stopped ?? 0) + 1,
      20_000,
      'the job stopped on the host',
    );
    // A late answer from the client goes nowhere, and the call is never answered.
    f.send({ jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: { name: 'late' } } });
    f.send({ jsonrpc: '2.0', id: 'after', method: 'tools/call', params: { name: 'spin', arguments: { ms: 0 } } });
    await f.next((m) => m.id === 'after');
    expect((f.lines as Wire[]).filter((m) => m.id === 'c')).toEqual([]);
  }, 120_000);

  it('a reply forged in Redis by a stranger is refused by the host; the real answer still wins', async () => {
    const f = await front2025();
    const spy = redis.client();
    const asks: { j: string; a: string }[] = [];
    spy.on('pmessage', (_p: string, _c: string, text: string) => {
      const m = JSON.parse(text) as { j: string; t: string; a?: string };
      if (m.t === 'q') asks.push({ j: m.j, a: m.a! });
    });
    await spy.psubscribe(`mcp:${Q}:to:*`);
    const before = await hostStats();
    f.send({ jsonrpc: '2.0', id: 'f', method: 'tools/call', params: { name: 'ask_name', arguments: {} } });
    const ask = await requestOf(f, 'elicitation/create');
    await until(async () => asks.length === 1, 10_000, 'the stranger saw the ask');
    const { j, a } = asks[0]!;
    const forged = JSON.stringify({ j, a, r: { action: 'accept', content: { name: 'mallory' } }, m: 'AAAA' });
    const unsigned = JSON.stringify({ j, a, r: { action: 'accept', content: { name: 'mallory' } } });
    await r.hset(`mcp:${Q}:job:${j}`, `r:${a}`, unsigned); // found by the host's check, too
    await r.publish(`mcp:${Q}:reply`, forged);
    await until(
      async () => ((await hostStats()).repliesRefused ?? 0) >= (before.repliesRefused ?? 0) + 2,
      20_000,
      'both forgeries refused',
    );
    f.send({ jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: { name: 'Ada' } } });
    expect(textOf(await f.next((m) => m.id === 'f'))).toBe('hello, Ada');
    spy.disconnect();
  }, 120_000);
});

describe('2026: a multi-round-trip call from a worker host, one front end', () => {
  async function front2026(args: string[] = []): Promise<LineServer> {
    const s = new LineServer(['--redis', redis.url, '--queue', Q, '--cluster-key-file', KEY, ...TOOLS, ...args]);
    opened.push(s.child);
    return s;
  }
  const call = (id: string | number, extra: Record<string, unknown> = {}) =>
    modernRequest(id, 'tools/call', { name: 'greet_user', arguments: {}, ...extra }, {}, ASKABLE);
  const answer = async (s: LineServer, id: string | number) => {
    await until(async () => s.lines.some((m) => m.id === id), 60_000, `answer ${id}`);
    return s.lines.find((m) => m.id === id)!;
  };

  it('input_required, then the retry carries the answer to the stage on its host and completes', async () => {
    const s = await front2026();
    s.send(call(1));
    const first = (await answer(s, 1)).result as {
      resultType: string;
      inputRequests: Record<string, unknown>;
      requestState: string;
    };
    expect(first.resultType).toBe('input_required');
    const [key] = Object.keys(first.inputRequests);
    s.send(
      call(2, {
        requestState: first.requestState,
        inputResponses: { [key!]: { action: 'accept', content: { name: 'octocat' } } },
      }),
    );
    const done = (await answer(s, 2)).result as { resultType: string; content: { text: string }[] };
    expect(done.resultType).toBe('complete');
    expect(done.content[0]!.text).toBe('hello, octocat; prepared 1 time(s) in this thread');
    expect(answerCounts(s.lines).get(1)).toBe(1);
    expect(answerCounts(s.lines).get(2)).toBe(1);
  }, 120_000);

  it('parked and never retried: cancelled after --input-wait-ms, the job stops on its host', async () => {
    const s = await front2026(['--input-wait-ms', '1500']);
    const before = await hostStats();
    s.send(call('p'));
    expect(((await answer(s, 'p')).result as { resultType: string }).resultType).toBe('input_required');
    await until(
      async () => (await hostStats()).stopped === (before.stopped ?? 0) + 1,
      30_000,
      'the parked job stopped on the host',
    );
  }, 120_000);
});
