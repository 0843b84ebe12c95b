/**
 * The hosts' and front ends' lives around Redis, with real processes and a
 * real redis-server: a host sees a cancel that won in Redis even without its
 * message (defect 3); a host stops jobs whose state Redis lost (12); a host
 * obeys SIGTERM with Redis down and drains within its deadline (8); a queue
 * with no host fails calls with a clear error (11); --queue-limit holds with
 * --redis (4); reconnects do not multiply the liveness timer (6); the first
 * call after start is queued (7). Assertions are on decided states and counts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { RawServer, sleep, until } from './helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import {
  call,
  cancel,
  initializeRaw,
  rawFrontEnd,
  responsesFor,
  startHost,
  type HostProcess,
} from './remote-helpers.js';

let redis: RedisProcess;
let r: Redis;
const hosts: HostProcess[] = [];
const fronts: RawServer[] = [];

beforeAll(async () => {
  redis = await startRedis();
  r = redis.client();
}, 30_000);
afterAll(async () => {
  for (const f of fronts) f.kill();
  await Promise.all(hosts.map((h) => h.kill()));
  await redis?.stop();
});

async function host(queue: string, args: string[] = []): Promise<HostProcess> {
  const h = await startHost(redis.url, queue, ['--threads', '1', ...args]);
  hosts.push(h);
  return h;
}
async function front(queue: string, args: string[] = []): Promise<RawServer> {
  const f = await rawFrontEnd(redis.url, queue, args);
  fronts.push(f);
  return f;
}
function text(m: Record<string, unknown>): string {
  const result = m.result as { content?: { text: string }[] } | undefined;
  return result?.content?.[0]?.text ?? JSON.stringify(m.error ?? m);
}
const alive = (h: HostProcess) => h.child.exitCode === null && h.child.signalCode === null;

describe('defect 3: a host sees a cancellation that won in Redis', () => {
  it('a cancel whose message the host never got (state set in Redis alone): the job stops on the host', async () => {
    const h = await host('d3a');
    const f = await front('d3a');
    call(f, 'lost-msg', 'spin', { ms: 60_000, stageMs: 1 });
    await until(async () => ((await h.stats(r)).running ?? 0) === 1, 20_000, 'the host running it');
    const [key] = await r.keys('mcp:d3a:job:*');
    await r.hset(key!, 's', 'cancelled'); // what the cancel script does, minus its message
    await until(
      async () => {
        const s = await h.stats(r);
        return s.running === 0 && s.active === 0 && (s.stopped ?? 0) === 1;
      },
      15_000,
      'the job stopped on the host',
    );
  }, 60_000);

  it('300 calls cancelled 0–12 ms after sending, across two hosts: once all are decided, no host runs anything', async () => {
    const [h1, h2] = [await host('d3b', ['--threads', '2']), await host('d3b', ['--threads', '2'])];
    const f = await front('d3b');
    const before = await f.stats();
    for (let i = 0; i < 300; i++) {
      const id = `race-${i}`;
      call(f, id, 'spin', { ms: 60_000, stageMs: 1 });
      setTimeout(() => cancel(f, id), i % 13);
      await sleep(2);
    }
    await until(
      async () => {
        const s = await f.stats();
        return s.cancelled! - before.cancelled! === 300 && s.inFlight === 0;
      },
      60_000,
      'every cancel decided',
    );
    // Every job was cancelled; one the hosts missed would run for a minute.
    await until(
      async () => (await Promise.all([h1, h2].map((h) => h.stats(r)))).every((s) => s.running === 0 && s.active === 0),
      15_000,
      'both hosts idle',
    );
    expect((await f.stats()).failed).toBe(before.failed);
    for (let i = 0; i < 300; i++) expect(responsesFor(f, `race-${i}`)).toEqual([]);
  }, 120_000);
});

describe('defect 12: Redis lost its state', () => {
  it('a restart without persistence: the host stops the job whose state is gone; the front end answers it with an error', async () => {
    const h = await host('d12');
    const f = await front('d12');
    call(f, 'lost', 'spin', { ms: 120_000, stageMs: 1 });
    await until(async () => ((await h.stats(r)).running ?? 0) === 1, 20_000, 'the host running it');
    await redis.kill();
    await redis.restart();
    r = redis.client();
    await until(
      async () => {
        const s = await h.stats(r);
        return s.running === 0 && s.active === 0 && (s.stateLost ?? 0) === 1;
      },
      20_000,
      'the host stopped the job',
    );
    const m = await f.next((x) => x.id === 'lost', 20_000);
    expect(text(m)).toMatch(/state in Redis is gone/);
  }, 90_000);
});

describe('defect 8: a host and SIGTERM', () => {
  it('SIGTERM while Redis is down: the host exits', async () => {
    const h = await host('d8a');
    await redis.kill();
    await sleep(500);
    try {
      const exited = new Promise<number | null>((resolve) => h.child.once('exit', (code) => resolve(code)));
      h.child.kill('SIGTERM');
      expect(await Promise.race([exited, sleep(20_000).then(() => 'still running')])).toBe(0);
    } finally {
      await redis.restart();
      r = redis.client();
    }
  }, 60_000);

  it('--drain-timeout-ms: a job still running at the deadline is stopped and handed back; another host takes it over', async () => {
    const a = await host('d8b', ['--drain-timeout-ms', '1000']);
    const f = await front('d8b');
    call(f, 'drained', 'spin', { ms: 120_000, stageMs: 1 });
    await until(async () => ((await a.stats(r)).running ?? 0) === 1, 20_000, 'host a running it');
    const b = await host('d8b');
    const exited = new Promise<number | null>((resolve) => a.child.once('exit', (code) => resolve(code)));
    a.child.kill('SIGTERM');
    expect(await Promise.race([exited, sleep(20_000).then(() => 'still running')])).toBe(0);
    expect(a.stderr()).toMatch(/drain timeout: 1 running job\(s\) stopped and handed back/);
    await until(async () => ((await b.stats(r)).running ?? 0) === 1, 30_000, 'host b took it over');
    cancel(f, 'drained');
    await until(async () => ((await b.stats(r)).running ?? 0) === 0, 15_000, 'host b stopped it');
    expect(responsesFor(f, 'drained')).toEqual([]);
  }, 90_000);
});

describe('defect 11: no worker host', () => {
  it('a queued call fails with an error naming the queue, new calls are refused, the front end logs it; a host brings calls back', async () => {
    const h = await host('d11');
    const f = await front('d11');
    await h.stop();
    call(f, 'nh1', 'spin', { ms: 1 });
    const m1 = await f.next((x) => x.id === 'nh1', 30_000);
    expect(text(m1)).toMatch(/no worker host is serving queue 'd11'/);
    call(f, 'nh2', 'spin', { ms: 1 });
    const m2 = await f.next((x) => x.id === 'nh2', 5000);
    expect(text(m2)).toMatch(/no worker host is serving queue 'd11'/);
    expect(f.stderr).toMatch(/no worker host is serving queue 'd11'.*waiting calls fail, new ones are refused/);
    await host('d11');
    await until(
      async () => {
        const id = `nh-back-${Math.random()}`;
        call(f, id, 'spin', { ms: 1 });
        const m = await f.next((x) => x.id === id, 10_000);
        return (m.result as { isError?: boolean } | undefined)?.isError !== true;
      },
      30_000,
      'calls working again',
    );
  }, 90_000);
});

describe('defect 4: --queue-limit with --redis', () => {
  it('--queue-limit 3 with one call running: 3 more wait, the rest get "server busy" at once', async () => {
    const h = await host('d4');
    const f = await front('d4', ['--queue-limit', '3']);
    call(f, 'q-run', 'spin', { ms: 60_000, stageMs: 1 });
    await until(
      async () => ((await h.stats(r)).running ?? 0) === 1 && (await f.stats()).running === 1,
      20_000,
      'one call running',
    );
    for (let i = 0; i < 8; i++) call(f, `q-${i}`, 'spin', { ms: 60_000, stageMs: 1 });
    await until(
      async () =>
        (f.lines as Record<string, unknown>[]).filter(
          (m) => typeof m.id === 'string' && m.id.startsWith('q-') && m.id !== 'q-run' && 'error' in m,
        ).length === 5,
      20_000,
      'five refused',
    );
    const refused = (f.lines as Record<string, unknown>[]).filter(
      (m) => typeof m.id === 'string' && m.id.startsWith('q-') && 'error' in m,
    );
    for (const m of refused)
      expect((m.error as { message: string }).message).toMatch(
        /server busy: total queue limit reached: 3 calls already waiting for a worker host \(--queue-limit 3\)/,
      );
    expect((await f.stats()).queued).toBe(3);
    for (const id of ['q-run', ...Array.from({ length: 8 }, (_, i) => `q-${i}`)]) cancel(f, id);
    await until(async () => (await f.stats()).inFlight === 0, 20_000, 'all cancelled');
  }, 60_000);
});

describe('defect 6: reconnects', () => {
  it('after 10 reconnects the front end still refreshes its liveness key about once a second', async () => {
    const h = await host('d6');
    const f = await front('d6');
    const works = async () => {
      const id = `d6-${Math.random()}`;
      call(f, id, 'spin', { ms: 1 });
      const m = await f.next((x) => x.id === id, 10_000).catch(() => undefined);
      return m !== undefined && (m.result as { isError?: boolean } | undefined)?.isError !== true;
    };
    for (let i = 0; i < 10; i++) {
      await r.call('CLIENT', 'KILL', 'TYPE', 'normal'); // every connection but this one: the front end's and the host's
      await until(works, 20_000, 'calls working after the reconnect');
    }
    await sleep(1500);
    // Keyspace events on a plain subscriber, not MONITOR: ioredis's monitor
    // connection breaks ("Command queue state error") on a loaded machine.
    await r.call('CONFIG', 'SET', 'notify-keyspace-events', 'K$');
    const sub = redis.client();
    let sets = 0;
    sub.on('pmessage', (_pattern: string, _channel: string, event: string) => {
      if (event === 'set') sets++;
    });
    await sub.psubscribe('__keyspace@0__:mcp:d6:front:*');
    await sleep(4000);
    sub.disconnect();
    await r.call('CONFIG', 'SET', 'notify-keyspace-events', '');
    expect(sets).toBeGreaterThan(0);
    expect(sets).toBeLessThanOrEqual(8); // one timer: ~4 in 4 s; one per reconnect would be ~44
    expect(alive(h)).toBe(true);
  }, 90_000);
});

describe('defect 7: serve --redis answers initialize once it can queue', () => {
  it('three fresh front ends: the first call right after initialize is queued and answered', async () => {
    await host('d7');
    for (let i = 0; i < 3; i++) {
      const raw = new RawServer(['--redis', redis.url, '--queue', 'd7']);
      fronts.push(raw);
      await initializeRaw(raw);
      call(raw, 'first', 'spin', { ms: 1 });
      const m = await raw.next((x) => x.id === 'first', 20_000);
      expect(text(m)).toMatch(/^spun 1 slices/);
      raw.kill();
    }
  }, 120_000);
});
