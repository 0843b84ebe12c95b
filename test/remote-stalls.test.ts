/**
 * Redis stalls and restarts against the one-winner rule, with real processes
 * and a real redis-server: a cancel that came while the call was being
 * queued is never followed by an answer (defect 1), an ordinary stall is not
 * taken for a dead front end (defect 5), a late cancel is counted once
 * (defect 9). Every assertion is on a decided state or count, never on timing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { sleep, until, type RawServer } from './helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import { call, cancel, leftovers, rawFrontEnd, responsesFor, startHost, type HostProcess } from './remote-helpers.js';

const Q = 'stalls';
let redis: RedisProcess;
let r: Redis;
let host: HostProcess;
let front: RawServer;

beforeAll(async () => {
  redis = await startRedis({ args: ['--enable-debug-command', 'yes'] });
  r = redis.client();
  host = await startHost(redis.url, Q, ['--threads', '1']);
  front = await rawFrontEnd(redis.url, Q);
}, 60_000);
afterAll(async () => {
  front?.kill();
  await host?.kill();
  await redis?.stop();
});

function text(m: Record<string, unknown>): string {
  return ((m.result as { content: { text: string }[] }).content[0] ?? { text: '' }).text;
}

/** Waits until the front end has settled everything and Redis holds no job state (a stall is over by then). */
async function quiet(): Promise<void> {
  await until(async () => (await front.stats()).inFlight === 0, 30_000, 'every call settled');
  await until(
    async () => (await leftovers(r, Q).catch(() => ({ jobStates: 1 }))).jobStates === 0,
    30_000,
    'no job state left',
  );
}

/** Stalls that hold the call in `submitting` (its job cannot reach Redis) until after the cancel. */
const stalls: [string, () => Promise<unknown>][] = [
  ['CLIENT PAUSE 4000', () => r.call('CLIENT', 'PAUSE', '4000')],
  ['CLIENT PAUSE 4000 WRITE', () => r.call('CLIENT', 'PAUSE', '4000', 'WRITE')],
  // DEBUG SLEEP blocks the server, so its own reply comes after: not awaited.
  [
    'DEBUG SLEEP 4',
    () => (
      void redis
        .client()
        .call('DEBUG', 'SLEEP', '4')
        .catch(() => undefined),
      sleep(200)
    ),
  ],
];

describe('defect 1: a cancel that came while the call was being queued is never answered', () => {
  for (const [name, stall] of stalls) {
    it(`${name}: the cancel wins, nothing is sent, the call counts as cancelled (not failed)`, async () => {
      await quiet();
      const before = await front.stats();
      const id = `d1-${name}`;
      await stall();
      call(front, id, 'spin', { ms: 50, stageMs: 1 });
      await sleep(300);
      cancel(front, id);
      await until(async () => (await front.stats()).cancelled === before.cancelled! + 1, 20_000, 'the cancel decided');
      await quiet(); // the stall is over, the job (if it landed) retired
      await sleep(1500); // a host that took it, or a late error, would have answered by now
      const after = await front.stats();
      expect(responsesFor(front, id)).toEqual([]);
      expect(after.failed).toBe(before.failed);
      expect(after.completed).toBe(before.completed);
    }, 60_000);
  }

  it('a Redis restart while the call is being queued: the cancel wins, nothing is sent', async () => {
    await quiet();
    const before = await front.stats();
    await r.call('CLIENT', 'PAUSE', '10000');
    call(front, 'd1-restart', 'spin', { ms: 50, stageMs: 1 });
    await sleep(300);
    cancel(front, 'd1-restart');
    await sleep(100);
    await redis.kill(); // the queuing commands in flight fail ("max retries per request")
    await redis.restart();
    r = redis.client();
    await until(async () => (await front.stats()).inFlight === 0, 20_000, 'the call settled');
    await sleep(1500);
    const after = await front.stats();
    expect(responsesFor(front, 'd1-restart')).toEqual([]);
    expect(after.cancelled).toBe(before.cancelled! + 1);
    expect(after.failed).toBe(before.failed);
    // The front end works again after the restart.
    await until(
      async () => {
        const id = `d1-after-${Math.random()}`;
        call(front, id, 'spin', { ms: 1 });
        const m = await front.next((x) => x.id === id, 10_000);
        return (m.result as { isError?: boolean }).isError !== true;
      },
      30_000,
      'calls working again',
    );
  }, 90_000);
});

describe('defect 5: an ordinary stall is not a dead front end', () => {
  it('Redis stalls 4 s (DEBUG SLEEP 4) while a call runs on a host: the call completes with its result', async () => {
    await quiet();
    call(front, 'd5-redis', 'spin', { ms: 6000, stageMs: 1 });
    await until(async () => ((await host.stats(r)).running ?? 0) === 1, 20_000, 'the host running it');
    void redis
      .client()
      .call('DEBUG', 'SLEEP', '4')
      .catch(() => undefined);
    const m = await front.next((x) => x.id === 'd5-redis', 40_000);
    expect(text(m)).toMatch(/^spun 6000 slices/);
    expect(responsesFor(front, 'd5-redis')).toHaveLength(1);
  }, 60_000);

  it('the front end paused 5 s (SIGSTOP) while its call runs: the call completes with its result', async () => {
    await quiet();
    const before = (await host.stats(r)).orphansCancelled ?? 0;
    call(front, 'd5-front', 'spin', { ms: 6000, stageMs: 1 });
    await until(async () => ((await host.stats(r)).running ?? 0) === 1, 20_000, 'the host running it');
    front.child.kill('SIGSTOP');
    await sleep(5000);
    front.child.kill('SIGCONT');
    const m = await front.next((x) => x.id === 'd5-front', 40_000);
    expect(text(m)).toMatch(/^spun 6000 slices/);
    expect((await host.stats(r)).orphansCancelled ?? 0).toBe(before);
  }, 60_000);
});

describe('defect 9: a late cancel is counted once', () => {
  it('a cancel read together with the outcome (front end paused meanwhile): one answer, one late cancel', async () => {
    await quiet();
    const before = await front.stats();
    const answered = (await host.stats(r)).answered ?? 0;
    call(front, 'd9', 'spin', { ms: 1500, stageMs: 1 });
    // Judged on the job's state in Redis (after quiet() it is the only one), not on the host's counters, which
    // reach Redis with its liveness refresh: a stale baseline once let the test resume the front end before the
    // host answered, so the cancel rightly won and nothing was owed.
    const onlyJobState = async () => {
      const keys = await r.keys(`mcp:${Q}:job:*`);
      return keys.length === 1 ? r.hget(keys[0]!, 's') : null;
    };
    await until(async () => (await onlyJobState()) === 'running', 20_000, 'the host running it');
    front.child.kill('SIGSTOP');
    cancel(front, 'd9'); // waits in the pipe, read before the outcome that arrives after it
    await until(
      async () => (await onlyJobState()) === 'responding',
      30_000,
      'the host answered (running → responding in Redis)',
    );
    await until(
      async () => ((await host.stats(r)).answered ?? 0) >= answered + 1,
      30_000,
      'the host counting its answer',
    );
    front.child.kill('SIGCONT');
    await front.next((x) => x.id === 'd9', 20_000);
    await quiet();
    const after = await front.stats();
    expect(responsesFor(front, 'd9')).toHaveLength(1); // completion won in Redis: its answer is owed
    const late = after.lateCancelsIgnored! - before.lateCancelsIgnored!;
    const unknown = after.unknownCancelsIgnored! - before.unknownCancelsIgnored!;
    expect(late + unknown).toBe(1);
  }, 60_000);
});
