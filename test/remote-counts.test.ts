/**
 * A front end's counts derived from its calls' states (issue 20): a call
 * waiting in Redis is queued, not running; a cancelled call whose host is
 * still stopping it counts as stopping until the host reports; a host's hard
 * stop reaches the front end's hardKilled. Real processes, a real
 * redis-server, one host with one thread.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from './helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import { call, cancel, rawFrontEnd, responsesFor, startHost, type HostProcess } from './remote-helpers.js';
import type { RawServer } from './helpers.js';

const TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/failing-tools.js', import.meta.url));
const Q = 'counts';
let redis: RedisProcess;
let host: HostProcess;
let front: RawServer;

beforeAll(async () => {
  redis = await startRedis();
  // A grace long enough that "stopping" is a state one can read, not a moment.
  host = await startHost(redis.url, Q, [
    '--threads',
    '1',
    '--spare-threads',
    '0',
    '--grace-ms',
    '5000',
    '--tools',
    TOOLS,
  ]);
  front = await rawFrontEnd(redis.url, Q, ['--tools', TOOLS]);
}, 90_000);
afterAll(async () => {
  front?.kill();
  await host?.kill();
  await redis?.stop();
});

describe('front-end counts on Redis', () => {
  it('queued while in Redis, running once taken, stopping until the host reports, then hardKilled', async () => {
    const before = await front.stats();
    call(front, 'tight', 'tight', { ms: 120_000 });
    await until(async () => (await front.stats()).running === 1, 30_000, 'the tight call running');
    call(front, 'waiting', 'spin', { ms: 120_000, stageMs: 1 });
    await until(async () => (await front.stats()).queued === 1, 30_000, 'the second call queued');
    let s = await front.stats();
    expect(s).toMatchObject({ running: 1, queued: 1, stopping: 0, inFlight: 2 });

    // The tight loop never checks: the host decides the cancel at once, and stops the thread after the grace.
    cancel(front, 'tight');
    await until(async () => (await front.stats()).stopping === 1, 30_000, 'the cancelled call stopping');
    s = await front.stats();
    expect(s.cancelled! - before.cancelled!).toBe(1);
    expect(s.hardKilled! - before.hardKilled!).toBe(0);
    await until(
      async () => (await front.stats()).hardKilled! - before.hardKilled! === 1,
      30_000,
      'the hard stop reported',
    );
    // The thread was replaced, so the waiting call runs now.
    await until(
      async () => {
        const now = await front.stats();
        return now.stopping === 0 && now.running === 1 && now.queued === 0;
      },
      30_000,
      'the waiting call taken',
    );

    cancel(front, 'waiting'); // cooperative: stopped at a checkpoint, no hard stop
    await until(async () => (await front.stats()).inFlight === 0, 30_000, 'both settled');
    // Settled at the cancel's decision; stopping until the host says its checkpoint stopped it.
    await until(async () => (await front.stats()).stopping === 0, 30_000, 'the host reporting the second stop');
    s = await front.stats();
    expect(s).toMatchObject({ running: 0, queued: 0, stopping: 0 });
    expect(s.cancelled! - before.cancelled!).toBe(2);
    expect(s.hardKilled! - before.hardKilled!).toBe(1);
    expect(s.completed! - before.completed!).toBe(0);
    expect(responsesFor(front, 'tight')).toEqual([]);
    expect(responsesFor(front, 'waiting')).toEqual([]);
  }, 120_000);
});
