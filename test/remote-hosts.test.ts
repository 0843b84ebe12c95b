/**
 * Many hosts: two worker hosts and two front ends on one queue, a real
 * redis-server, real processes. The seed's cases, one level up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { sleep, until, type RawServer } from './helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import {
  call,
  cancel,
  NO_LEFTOVERS,
  rawFrontEnd,
  settledLeftovers,
  responsesFor,
  startHost,
  type HostProcess,
} from './remote-helpers.js';

const Q = 'hosts';
let redis: RedisProcess;
let r: Redis;
let hosts: HostProcess[] = [];
let a: RawServer;
let b: RawServer;

beforeAll(async () => {
  redis = await startRedis();
  r = redis.client();
  hosts = await Promise.all([startHost(redis.url, Q, ['--threads', '1']), startHost(redis.url, Q, ['--threads', '1'])]);
  [a, b] = await Promise.all([rawFrontEnd(redis.url, Q), rawFrontEnd(redis.url, Q)]);
}, 60_000);
afterAll(async () => {
  a?.kill();
  b?.kill();
  await Promise.all(hosts.map((h) => h.stop()));
  await redis?.stop();
});

async function hostStats(): Promise<Record<string, number>[]> {
  return Promise.all(hosts.map((h) => h.stats(r)));
}
const sum = (rows: Record<string, number>[], key: string) => rows.reduce((n, s) => n + (s[key] ?? 0), 0);

describe('across hosts', () => {
  it('a call runs on a worker host and its progress arrives with its own token, before the response', async () => {
    call(a, 'p1', 'spin', { ms: 300, stageMs: 10 }, 'tok-p1');
    const response = await a.next((m) => m.id === 'p1', 15_000);
    expect((response.result as { isError?: boolean }).isError).toBeUndefined();
    const at = a.lines.indexOf(response);
    const progress = (a.lines as Record<string, unknown>[]).filter(
      (m) =>
        m.method === 'notifications/progress' && (m.params as { progressToken: string }).progressToken === 'tok-p1',
    );
    expect(progress.length).toBeGreaterThan(0);
    for (const p of progress) expect(a.lines.indexOf(p)).toBeLessThan(at);
  });

  it('cancel of a call running on another host: the work stops, nothing is sent for it, the host takes its next job at once', async () => {
    const before = await hostStats();
    // Both hosts busy with long calls from front end A, then cancel both.
    call(a, 'long1', 'spin', { ms: 60_000, stageMs: 1 });
    call(a, 'long2', 'spin', { ms: 60_000, stageMs: 1 });
    await until(async () => sum(await hostStats(), 'running') === 2, 10_000, 'both hosts running');
    cancel(a, 'long1');
    cancel(a, 'long2');
    // The hosts' threads are kept and free at once: two quick calls from front end B complete promptly.
    const t0 = Date.now();
    call(b, 'next1', 'spin', { ms: 1 });
    call(b, 'next2', 'spin', { ms: 1 });
    await b.next((m) => m.id === 'next1', 5000);
    await b.next((m) => m.id === 'next2', 5000);
    expect(Date.now() - t0).toBeLessThan(3000); // 60 s of work would not have let them through
    await until(
      async () => sum(await hostStats(), 'cancelsRelayed') - sum(before, 'cancelsRelayed') === 2,
      5000,
      'the cancels relayed to the hosts',
    );
    // A host rewrites its counters just after it answered, so they may trail the answers by a moment.
    await until(
      async () => {
        const s = await hostStats();
        return sum(s, 'running') + sum(s, 'stopping') === 0 && sum(s, 'stopped') - sum(before, 'stopped') === 2;
      },
      5000,
      'both cancelled calls stopped on their hosts, nothing running',
    );
    const after = await hostStats();
    expect(sum(after, 'hardKilled')).toBe(sum(before, 'hardKilled')); // stopped at a checkpoint, not by replacing the thread
    expect(sum(after, 'threads')).toBe(sum(before, 'threads'));
    await sleep(500);
    expect(responsesFor(a, 'long1')).toEqual([]);
    expect(responsesFor(a, 'long2')).toEqual([]);
    expect(await a.stats()).toMatchObject({ cancelled: 2, inFlight: 0 });
  });

  it('a cancel of a queued call takes it off the queue: it never reaches a host', async () => {
    call(a, 'busy1', 'spin', { ms: 2000, stageMs: 1 });
    call(a, 'busy2', 'spin', { ms: 2000, stageMs: 1 });
    await until(async () => sum(await hostStats(), 'running') === 2, 10_000, 'both hosts busy');
    const skippedBefore = sum(await hostStats(), 'skipped');
    const completedBefore = sum(await hostStats(), 'answered');
    call(a, 'queued1', 'spin', { ms: 1 });
    await until(
      async () => (await r.llen(`bull:${Q}:wait`)) + (await r.zcard(`bull:${Q}:prioritized`)) >= 1,
      5000,
      'the call on the queue',
    );
    cancel(a, 'queued1');
    await a.next((m) => m.id === 'busy1', 15_000);
    await a.next((m) => m.id === 'busy2', 15_000);
    await sleep(500);
    expect(responsesFor(a, 'queued1')).toEqual([]);
    const s = await hostStats();
    // It ran nowhere: the two busy calls are the only ones answered, and no host even took it (removed from the queue).
    expect(sum(s, 'answered') - completedBefore).toBe(2);
    expect(sum(s, 'skipped') - skippedBefore).toBe(0);
  });

  it('completion just before the cancel: the response goes out and the late cancel changes nothing', async () => {
    call(a, 'quick', 'spin', { ms: 5 });
    await a.next((m) => m.id === 'quick', 10_000);
    cancel(a, 'quick');
    call(a, 'after', 'spin', { ms: 1 });
    await a.next((m) => m.id === 'after', 10_000);
    expect(responsesFor(a, 'quick')).toHaveLength(1);
    expect(a.lines.filter((m) => (m as { method?: string }).method === 'notifications/cancelled')).toEqual([]);
  });

  it("unknown ids and another front end's ids are ignored; the same id on two front ends are two calls", async () => {
    const unknownBefore = (await b.stats()).unknownCancelsIgnored!;
    call(a, 7, 'spin', { ms: 400, stageMs: 1 });
    call(b, 7, 'spin', { ms: 60_000, stageMs: 1 });
    await sleep(100);
    cancel(b, 7); // cancels B's call 7 only
    cancel(b, 'never-sent');
    cancel(a, 'no-such-id');
    const ra = await a.next((m) => m.id === 7, 15_000);
    expect((ra.result as { content: { text: string }[] }).content[0]!.text).toMatch(/^spun 400 slices/);
    await sleep(500);
    expect(responsesFor(b, 7)).toEqual([]);
    expect((await b.stats()).unknownCancelsIgnored).toBe(unknownBefore + 1);
    // A cancel in the wrong direction (a response id the server used for nothing of the client's) is not an inbound call either.
    b.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'server-side-0' } });
    call(b, 'alive', 'spin', { ms: 1 });
    await b.next((m) => m.id === 'alive', 10_000);
  });

  it('leaves nothing behind: no job state, no queued or kept BullMQ jobs, no calls in flight', async () => {
    await until(
      async () => sum(await hostStats(), 'running') + sum(await hostStats(), 'stopping') === 0,
      10_000,
      'hosts idle',
    );
    expect(await settledLeftovers(r, Q)).toEqual(NO_LEFTOVERS);
    expect((await a.stats()).inFlight).toBe(0);
    expect((await b.stats()).inFlight).toBe(0);
  });
});
