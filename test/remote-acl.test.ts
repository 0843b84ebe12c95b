/**
 * The first wall around Redis (issue 25): the ACL the README gives front ends
 * and worker hosts suffices for calls, progress and cancels, with no command
 * denied, and it keeps a user of that ACL out of every other queue's keys.
 * A real redis-server with ACL users, real front-end and host processes.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from './helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import { call, cancel, rawFrontEnd, responsesFor, startHost, type HostProcess } from './remote-helpers.js';
import type { RawServer } from './helpers.js';

/** The README's rules, for queue `q` (a user per role; today both roles need the same). */
const aclFor = (queue: string) =>
  `~bull:${queue}:* ~mcp:${queue}:* &mcp:${queue}:* +@read +@write +@keyspace +@scripting +@pubsub +@blocking +@transaction +@connection -@dangerous +info +time`.split(' ');
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
  host = await startHost(urlOf('mcp-host', 'host-pw'), Q, ['--threads', '1']);
  front = await rawFrontEnd(urlOf('mcp-front', 'front-pw'), Q);
}, 90_000);
afterAll(async () => {
  front?.kill();
  await host?.kill();
  await redis?.stop();
});

describe('the minimal ACL', () => {
  it('suffices: a call with progress is answered, a running call is cancelled and stops on its host, and Redis denied nothing', async () => {
    call(front, 'done', 'spin', { ms: 30, stageMs: 5 }, 'p-done');
    expect((await front.next((m) => m.id === 'done', 30_000)).result).not.toHaveProperty('isError', true);
    call(front, 'stop', 'spin', { ms: 60_000, stageMs: 2 });
    await until(async () => (await front.stats()).running === 1, 30_000, 'the long call running');
    cancel(front, 'stop');
    await until(async () => {
      const s = await front.stats();
      return s.inFlight === 0 && s.stopping === 0;
    }, 30_000, 'the cancelled call stopped on its host');
    expect(responsesFor(front, 'stop')).toEqual([]);
    expect(await admin.call('ACL', 'LOG')).toEqual([]);
  }, 90_000);

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
