/**
 * The storm across hosts: 2,000 randomized complete-vs-cancel races from two
 * front ends onto two worker hosts. Each call has exactly one outcome (one
 * response, or nothing because its cancel won); at the end the queue, the
 * Redis job states and every registry are empty.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { sleep, until, type RawServer } from './helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import {
  call,
  cancel,
  NO_LEFTOVERS,
  rawFrontEnd,
  settledLeftovers,
  startHost,
  type HostProcess,
} from './remote-helpers.js';
import { rng } from '../bench/lib/rng.js';

const Q = 'storm';
const PER_FRONT = 1000;
let redis: RedisProcess;
let r: Redis;
let hosts: HostProcess[] = [];
let fronts: RawServer[] = [];

beforeAll(async () => {
  redis = await startRedis();
  r = redis.client();
  hosts = await Promise.all([startHost(redis.url, Q, ['--threads', '1']), startHost(redis.url, Q, ['--threads', '1'])]);
  fronts = await Promise.all([rawFrontEnd(redis.url, Q), rawFrontEnd(redis.url, Q)]);
  await sleep(1200); // the hosts' counters include the readiness calls
}, 60_000);
afterAll(async () => {
  for (const f of fronts) f.kill();
  await Promise.all(hosts.map((h) => h.stop()));
  await redis?.stop();
});

it(`${2 * PER_FRONT} complete-vs-cancel races across two hosts: exactly one outcome each, nothing left behind`, async () => {
  const seed = Number(process.env.STORM_SEED ?? Date.now() % 100_000);
  const rand = rng(seed); // seeded, so a failing run can be replayed
  const before = await Promise.all(fronts.map((f) => f.stats()));
  const hostsBefore = await Promise.all(hosts.map((h) => h.stats(r)));
  const timers: Promise<void>[] = [];
  for (let i = 0; i < PER_FRONT; i++) {
    for (const [k, f] of fronts.entries()) {
      const id = `s${k}-${i}`;
      call(f, id, 'spin', { ms: Math.floor(rand() * 5), stageMs: 1 });
      const delay = Math.floor(rand() * 30);
      timers.push(sleep(delay).then(() => cancel(f, id)));
    }
    await sleep(3); // a steady stream near the hosts' pace, so cancels meet queued, running and finishing calls
  }
  await Promise.all(timers);
  await until(
    async () => {
      const s = await Promise.all(fronts.map((f) => f.stats()));
      return s.every(
        (x, k) =>
          x.completed! + x.cancelled! - before[k]!.completed! - before[k]!.cancelled! === PER_FRONT && x.inFlight === 0,
      );
    },
    60_000,
    `every call settled (seed ${seed})`,
  );
  await sleep(500); // anything wrongly sent late would arrive by now
  let completedTotal = 0;
  let cancelledTotal = 0;
  for (const [k, f] of fronts.entries()) {
    const s = await f.stats();
    const completed = s.completed! - before[k]!.completed!;
    const cancelled = s.cancelled! - before[k]!.cancelled!;
    expect(s.failed, `seed ${seed}`).toBe(before[k]!.failed);
    const perId = new Map<string, number>();
    for (const m of f.lines as Record<string, unknown>[]) {
      if (typeof m.id === 'string' && m.id.startsWith(`s${k}-`) && ('result' in m || 'error' in m))
        perId.set(m.id, (perId.get(m.id) ?? 0) + 1);
    }
    // Never two answers for one call; exactly the completed ones answered, and nothing for those whose cancel won.
    expect(
      [...perId.values()].every((n) => n === 1),
      `seed ${seed}`,
    ).toBe(true);
    expect(perId.size, `seed ${seed}`).toBe(completed);
    expect(completed + cancelled).toBe(PER_FRONT);
    completedTotal += completed;
    cancelledTotal += cancelled;
  }
  // Real races: both outcomes happen.
  expect(completedTotal, `seed ${seed}`).toBeGreaterThan(0);
  expect(cancelledTotal, `seed ${seed}`).toBeGreaterThan(0);
  await sleep(1200); // the hosts' counters (in their liveness keys) refresh every second
  await until(
    async () =>
      (await Promise.all(hosts.map((h) => h.stats(r)))).every(
        (s) => s.running === 0 && s.stopping === 0 && s.inFlight === 0 && s.active === 0,
      ),
    10_000,
    'hosts idle',
  );
  const hostStats = await Promise.all(hosts.map((h) => h.stats(r)));
  // Both hosts took part, and what they answered is exactly what the front ends completed.
  for (const [k, s] of hostStats.entries()) expect(s.answered! - hostsBefore[k]!.answered!).toBeGreaterThan(0);
  expect(hostStats.reduce((n, s, k) => n + s.answered! - hostsBefore[k]!.answered!, 0)).toBe(completedTotal);
  expect(await settledLeftovers(r, Q)).toEqual(NO_LEFTOVERS);
  console.log(
    `storm seed ${seed}: ${completedTotal} completed, ${cancelledTotal} cancelled; hosts`,
    hostStats.map((s) => ({
      answered: s.answered,
      dropped: s.dropped,
      skipped: s.skipped,
      cancelsRelayed: s.cancelsRelayed,
    })),
  );
});
