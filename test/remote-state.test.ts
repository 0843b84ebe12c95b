/** The per-job state machine in Redis (src/remote/lua/job-lua.ts), against a real redis-server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { JobStates } from '../dist/src/remote/lua/job-states.js';
import { Liveness } from '../dist/src/remote/liveness.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';

let redis: RedisProcess;
let a: Redis;
let b: Redis;
let sub: Redis;
beforeAll(async () => {
  redis = await startRedis();
  a = redis.client();
  b = redis.client();
  sub = redis.client();
});
afterAll(async () => redis?.stop());

describe('per-job state in Redis', () => {
  it('walks queued → running → responding and publishes the outcome in the same step', async () => {
    const s = new JobStates(a, 'q1');
    const front = new Liveness(a, s.keys.front('F'));
    await front.start();
    const got: string[] = [];
    await sub.subscribe(s.keys.frontChannel('F'));
    sub.on('message', (_c, m) => got.push(m));
    await s.create('j1', 'F');
    expect(await s.take('j1', 'F', 'H1', 'tok1')).toBe('running');
    expect(await s.report('j1', 'F', 'tok1', 'progress-1')).toBe(true);
    expect(await s.report('j1', 'F', 'other', 'forged')).toBe(false);
    expect(await s.respond('j1', 'F', 'wrong-token', 'x')).toBe(false);
    expect(await s.respond('j1', 'F', 'tok1', 'outcome-1')).toBe(true);
    expect(await s.report('j1', 'F', 'tok1', 'late')).toBe(false); // none after terminal
    expect(await s.requestCancel('j1')).toEqual({ found: 'responding', message: 'outcome-1' }); // completion won: the late cancel changes nothing, and gets the outcome
    expect(await s.probe('j1')).toEqual({ state: 'responding', message: 'outcome-1', host: 'H1', hostAlive: false }); // H1 keeps no liveness key here
    expect(await s.respond('j1', 'F', 'wrong-token', 'x')).toBe(false); // over responding, only the token's holder (a stranger's write is replaced by it)
    await new Promise((r) => setTimeout(r, 100));
    expect(got).toEqual(['{"j":"j1","t":"r","h":"H1"}', 'progress-1', 'outcome-1']); // the take tells the front end
    await s.retire('j1');
    expect(await s.probe('j1')).toEqual({ state: 'gone' });
    expect((await s.requestCancel('j1')).found).toBe('unknown');
    await sub.unsubscribe();
    sub.removeAllListeners('message');
  });

  it('a queued cancel wins before any host; a running cancel is published to the hosts; neither can respond after', async () => {
    const s = new JobStates(a, 'q2');
    await new Liveness(a, s.keys.front('F')).start();
    const cancels: string[] = [];
    await sub.subscribe(s.keys.cancelChannel);
    sub.on('message', (_c, m) => cancels.push(m));
    await s.create('q', 'F');
    expect((await s.requestCancel('q')).found).toBe('queued');
    expect(await s.take('q', 'F', 'H', 't')).toBe('cancelled');
    await s.create('r', 'F');
    expect(await s.take('r', 'F', 'H', 't')).toBe('running');
    expect((await s.requestCancel('r')).found).toBe('running');
    expect(await s.respond('r', 'F', 't', 'x')).toBe(false);
    expect((await s.requestCancel('r')).found).toBe('cancelled');
    await new Promise((r) => setTimeout(r, 100));
    expect(cancels).toEqual(['r']);
    await sub.unsubscribe();
    sub.removeAllListeners('message');
  });

  it('a job whose front end is gone is cancelled when taken, and a host can cancel it while running', async () => {
    const s = new JobStates(a, 'q3');
    const front = new Liveness(a, s.keys.front('F'), 600, 100);
    await front.start();
    await s.create('j', 'F');
    await s.create('k', 'F');
    expect(await s.take('k', 'F', 'H', 't')).toBe('running');
    expect(await s.check('k', 'F', 't')).toBe('running');
    expect(await s.check('k', 'F', 'other')).toBe('retaken');
    await front.stop();
    expect(await s.take('j', 'F', 'H', 't')).toBe('orphan');
    expect(await s.check('k', 'F', 't')).toBe('orphan');
    expect(await s.check('k', 'F', 't')).toBe('cancelled');
    expect(await s.check('nope', 'F', 't')).toBe('gone');
    expect(await s.respond('k', 'F', 't', 'x')).toBe(false);
  });

  it('a liveness key expires within its TTL once nobody refreshes it', async () => {
    const live = new Liveness(a, 'mcp:ttl:front:X', 300, 100);
    await live.start();
    await new Promise((r) => setTimeout(r, 400));
    expect(await a.exists('mcp:ttl:front:X')).toBe(1); // refreshed
    // Simulate a SIGKILL: stop refreshing without deleting.
    (live as unknown as { timer: NodeJS.Timeout }).timer.close();
    await new Promise((r) => setTimeout(r, 500));
    expect(await a.exists('mcp:ttl:front:X')).toBe(0);
  });

  it('a state waiting on a BullMQ job that is gone (a write lost in a failover) is jobless, and only then may the front end fail it', async () => {
    const s = new JobStates(a, 'q-jobless');
    await new Liveness(a, s.keys.front('F')).start();
    await s.create('j', 'F');
    expect(await s.probe('j')).toEqual({ state: 'jobless' });
    await a.hset(s.keys.bullJob('j'), 'name', 'spin');
    expect(await s.probe('j')).toEqual({ state: 'queued' });
    expect(await s.failIfJobless('j')).toBe(false); // BullMQ still has it
    expect(await s.take('j', 'F', 'H1', 'k')).toBe('running');
    await a.del(s.keys.bullJob('j'));
    expect(await s.probe('j')).toEqual({ state: 'jobless' });
    expect(await s.failIfJobless('j')).toBe(true);
    expect(await s.probe('j')).toEqual({ state: 'failed' });
    expect(await s.respond('j', 'F', 'k', 'late')).toBe(false); // the host's late answer loses
    expect(await s.failIfJobless('j')).toBe(false); // once
  });

  it('a stalled host is taken over: the new token may respond, the old one may not, and the old host is told to stop', async () => {
    const s = new JobStates(a, 'q4');
    await new Liveness(a, s.keys.front('F')).start();
    const cancels: string[] = [];
    await sub.subscribe(s.keys.cancelChannel);
    sub.on('message', (_c, m) => cancels.push(m));
    await s.create('j', 'F');
    await a.hset(s.keys.bullJob('j'), 'name', 'spin'); // BullMQ's job (the front end adds it after the state)
    expect(await s.take('j', 'F', 'H1', 'old')).toBe('running');
    expect(await s.probe('j')).toEqual({ state: 'hostless', host: 'H1' }); // H1 has no liveness key
    expect(await s.take('j', 'F', 'H2', 'new')).toBe('retaken');
    await a.set(s.keys.host('H2'), '1');
    expect(await s.probe('j')).toEqual({ state: 'running', host: 'H2' });
    expect(await s.failIfLost('j', 'H2')).toBe(false); // H2 is alive
    expect(await s.respond('j', 'F', 'old', 'x')).toBe(false);
    expect(await s.respond('j', 'F', 'new', 'y')).toBe(true);
    await new Promise((r) => setTimeout(r, 100));
    expect(cancels).toEqual(['j old']);
    await sub.unsubscribe();
    sub.removeAllListeners('message');
  });

  it("an open ask is kept while its host holds the job, listed by the probe until replied or withdrawn; a takeover drops the old holder's", async () => {
    const s = new JobStates(a, 'q9');
    await new Liveness(a, s.keys.front('F')).start();
    await new Liveness(a, s.keys.host('H1')).start();
    await s.create('j', 'F');
    await a.set(s.keys.bullJob('j'), '1'); // stands in for BullMQ's job (the probe checks it)
    expect(await s.ask('j', 'F', 'tok1', 'a0', 'early')).toBe(false); // queued: nobody holds it
    expect(await s.take('j', 'F', 'H1', 'tok1')).toBe('running');
    expect(await s.probe('j')).toEqual({ state: 'running', host: 'H1' }); // no asks: nothing listed
    expect(await s.ask('j', 'F', 'tok1', 'a1', 'q-one')).toBe(true);
    expect(await s.ask('j', 'F', 'tok1', 'a2', 'q-two')).toBe(true);
    expect(await s.ask('j', 'F', 'forged', 'a3', 'q-three')).toBe(false);
    expect(await s.probe('j')).toMatchObject({ state: 'running', asks: expect.arrayContaining(['a1', 'a2']) });
    expect(await s.openAsks('j', ['a1', 'a2', 'a3'])).toEqual(['q-one', 'q-two', null]);
    expect(await s.reply('j', 'F', 'a1', 'r-one')).toBe(true); // the reply closes the ask in the same step
    expect(await s.withdrawAsk('j', 'F', 'tok1', 'a2', 'x-two')).toBe(true);
    expect(await s.probe('j')).toEqual({ state: 'running', host: 'H1' });
    expect(await s.ask('j', 'F', 'tok1', 'a4', 'q-four')).toBe(true);
    expect(await s.take('j', 'F', 'H2', 'tok2')).toBe('retaken');
    expect(await s.openAsks('j', ['a4'])).toEqual([null]); // the old holder's ask is no new holder's
    expect(await s.withdrawAsk('j', 'F', 'tok1', 'a4', 'x-four')).toBe(false); // nor is its withdrawal published
    await s.retire('j');
    expect(await a.exists(s.keys.job('j'))).toBe(0);
  });

  it('a job on a lost host fails once; no host can respond or take it after', async () => {
    const s = new JobStates(a, 'q5');
    await new Liveness(a, s.keys.front('F')).start();
    await s.create('j', 'F');
    expect(await s.take('j', 'F', 'H1', 't')).toBe('running');
    expect(await s.failIfLost('j', 'H1')).toBe(true);
    expect(await s.failIfLost('j', 'H1')).toBe(false);
    expect(await s.respond('j', 'F', 't', 'x')).toBe(false);
    expect(await s.take('j', 'F', 'H2', 't2')).toBe('failed');
    expect((await s.requestCancel('j')).found).toBe('failed');
  });

  it('concurrency: 3,000 cancel-vs-respond races from two connections each have exactly one winner', async () => {
    const front = new JobStates(a, 'race');
    const host = new JobStates(b, 'race');
    await new Liveness(a, front.keys.front('F')).start();
    const n = 3000;
    const ids = Array.from({ length: n }, (_, i) => `r${i}`);
    await Promise.all(ids.map((id) => front.create(id, 'F')));
    await Promise.all(ids.map((id) => host.take(id, 'F', 'H', 'tok')));
    // Both sides fire at once, interleaved differently per job.
    const results = await Promise.all(
      ids.map(async (id, i) => {
        const cancel = () => front.requestCancel(id).then((x) => x.found);
        const respond = () => host.respond(id, 'F', 'tok', id);
        const [c, r] =
          i % 2
            ? await Promise.all([cancel(), respond()])
            : ((await Promise.all([respond(), cancel()])).reverse() as [string, boolean]);
        return { c, r };
      }),
    );
    let cancelled = 0;
    let responded = 0;
    for (const { c, r } of results) {
      const cancelWon = c === 'running';
      expect(cancelWon !== r).toBe(true); // exactly one of the two
      if (cancelWon) cancelled++;
      else {
        expect(c).toBe('responding');
        responded++;
      }
    }
    expect(cancelled + responded).toBe(n);
    // Both kinds of winner occur (the two connections really race); at least a few of each.
    expect(cancelled).toBeGreaterThan(0);
    expect(responded).toBeGreaterThan(0);
    const states = await Promise.all(ids.map((id) => front.probe(id)));
    expect(states.filter((s) => s.state === 'cancelled').length).toBe(cancelled);
    expect(states.filter((s) => s.state === 'responding').length).toBe(responded);
  });
});
