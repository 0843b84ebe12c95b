/**
 * A 2026 task's questions in Redis (src/remote/tasks/task-input-store.ts,
 * task-input-lua.ts) against a real redis-server, two instances standing for
 * two front ends of one queue: the one-winner steps raced many times (two
 * answers; an answer against the expiry), the owner check, a forged question
 * left out, a settle removing the questions, and the host's view of asks
 * that reached nobody (STRANDED, ask-lua.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { ClusterKey } from '../dist/src/remote/config/cluster-key.js';
import { JobStates } from '../dist/src/remote/lua/job-states.js';
import { taskJobId } from '../dist/src/remote/keys.js';
import { Liveness } from '../dist/src/remote/liveness.js';
import { RedisTaskInputs } from '../dist/src/remote/tasks/task-input-store.js';
import { RedisTaskStore } from '../dist/src/remote/tasks/task-store.js';
import { cancelledAnswer, taskSettlement } from '../dist/src/tasks/answer.js';
import { resolveLimits } from '../dist/src/tasks/memory-store.js';
import { until } from './helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';

let redis: RedisProcess;
let c: Redis;
/** The second front end's own connection: commands on one connection run in order, so a race needs two. */
let c2: Redis;
beforeAll(async () => {
  redis = await startRedis();
  c = redis.client();
  c2 = redis.client();
});
afterAll(async () => {
  c?.disconnect();
  c2?.disconnect();
  await redis?.stop();
});

const KEY = ClusterKey.from('k'.repeat(32));
const ELICIT = { method: 'elicitation/create' as const, params: { message: 'Name?' } };
const yes = (name: string) => ({ action: 'accept', content: { name } });

function cluster(queue: string) {
  const states = new JobStates(c, queue);
  const store = new RedisTaskStore(c, states, 'F', KEY, { ...resolveLimits({}), settlementOf: taskSettlement });
  return {
    states,
    store,
    f: new RedisTaskInputs(c, states, KEY),
    g: new RedisTaskInputs(c2, new JobStates(c2, queue), KEY),
  };
}
/** A task of `owner` whose job runs on host H, created by front end F. */
async function runningTask(k: ReturnType<typeof cluster>, taskId: string, owner = 'owner'): Promise<string> {
  await k.store.create(owner, 60_000, taskId, 'greet_user');
  const job = taskJobId(taskId);
  await k.states.create(job, 'F', taskId);
  expect(await k.states.take(job, 'F', 'H', 'tok')).toBe('running');
  return job;
}

describe("a task's questions in Redis", () => {
  it('two answers raced on two front ends, 20 times: one is sent to the host, the other finds it taken', async () => {
    const k = cluster('ti-claims');
    for (let i = 0; i < 20; i++) {
      const job = await runningTask(k, `C${i}`);
      const placed = await k.f.ask(
        'owner',
        `C${i}`,
        'elicitation',
        { ...ELICIT, relayId: `a${i}` },
        600_000,
        'waiting',
      );
      expect(placed?.key).toBe('elicitation-1');
      const [q] = await k.g.questions(`C${i}`);
      const found = await Promise.all([
        k.f.claim('owner', `C${i}`, q!, yes('f')),
        k.g.claim('owner', `C${i}`, q!, yes('g')),
      ]);
      expect([...found].sort()).toEqual(['sent', 'taken']);
      const reply = JSON.parse((await c.hget(`mcp:ti-claims:job:${job}`, `r:a${i}`))!) as {
        r: { content: { name: string } };
      };
      expect(reply.r.content.name).toBe(found[0] === 'sent' ? 'f' : 'g');
      // Nothing outstanding: the task works again, its wait cleared.
      expect((await k.store.get('owner', `C${i}`))?.task.status).toBe('working');
      expect(await c.zscore('mcp:ti-claims:inputwait', `C${i}`)).toBeNull();
    }
  });

  it('an answer against the expiry, in either order and raced 20 times: exactly one wins (sent, or the job cancelled and the task settled)', async () => {
    const k = cluster('ti-expiry');
    const wins = { answer: 0, expiry: 0 };
    for (let i = 0; i < 22; i++) {
      const id = `E${i}`;
      const job = await runningTask(k, id);
      await k.f.ask('owner', id, 'elicitation', { ...ELICIT, relayId: `a${i}` }, 1, 'waiting');
      expect((await k.store.get('owner', id))?.task.status).toBe('input_required');
      const [q] = await k.g.questions(id);
      await until(async () => (await k.g.due()).includes(id), 10_000, 'the wait due');
      const claim = () => k.g.claim('owner', id, q!, yes('late'));
      const expire = () => k.f.expire(id, (ms) => `expired after ${ms} ms`, cancelledAnswer(id));
      // The first two in a fixed order (each outcome seen at least once), the rest raced.
      const [claimed, expired] =
        i === 0
          ? [await claim(), await expire()]
          : i === 1
            ? await expire().then(async (e) => [await claim(), e] as const)
            : await Promise.all([claim(), expire()]);
      if (i === 0) expect(claimed).toBe('sent');
      if (i === 1) expect(expired).toBe('owner');
      const state = await c.hget(`mcp:ti-expiry:job:${job}`, 's');
      const task = (await k.store.get('owner', id))?.task;
      if (claimed === 'sent') {
        wins.answer++;
        expect(expired).toBeUndefined();
        expect(state).toBe('running');
        expect(task?.status).toBe('working');
      } else {
        wins.expiry++;
        expect(claimed).toBe('settled');
        expect(expired).toBe('owner');
        expect(state).toBe('cancelled');
        expect(task).toMatchObject({ status: 'cancelled', statusMessage: 'expired after 1 ms' });
        expect(await c.hexists(`mcp:ti-expiry:job:${job}`, `r:a${i}`)).toBe(0);
      }
      expect(await c.exists(`mcp:ti-expiry:input:${id}`)).toBe(0);
    }
    expect(wins.answer + wins.expiry).toBe(22);
  });

  it("another owner's answer is refused; a forged question is not shown; a settle removes the questions; a settled task asks nothing", async () => {
    const k = cluster('ti-misc');
    await runningTask(k, 'M');
    await k.f.ask('owner', 'M', 'elicitation', { ...ELICIT, relayId: 'a1' }, 600_000, 'waiting');
    await k.f.ask('owner', 'M', 'roots', { method: 'roots/list', params: {}, relayId: 'a2' }, 600_000, 'waiting');
    const [q1, q2] = await k.g.questions('M');
    expect([q1?.key, q2?.key]).toEqual(['elicitation-1', 'roots-2']);
    expect(await k.g.claim('mallory', 'M', q1!, yes('m'))).toBe('unknown');
    // Altered in Redis by a stranger: left out, and not answerable as what it was.
    const altered = JSON.stringify({ ...JSON.parse(q2!.stored), params: { message: 'Your password?' } });
    await c.hset('mcp:ti-misc:input:M', 'roots-2', altered);
    expect((await k.g.questions('M')).map((q) => q.key)).toEqual(['elicitation-1']);
    expect(await k.g.claim('owner', 'M', q2!, { roots: [] })).toBe('taken');
    expect(await k.store.settle('owner', 'M', 'cancelled', cancelledAnswer('M'))).toBeDefined();
    expect(await c.exists('mcp:ti-misc:input:M')).toBe(0);
    expect(await c.zscore('mcp:ti-misc:inputwait', 'M')).toBeNull();
    expect(
      await k.f.ask('owner', 'M', 'elicitation', { ...ELICIT, relayId: 'a3' }, 600_000, 'waiting'),
    ).toBeUndefined();
  });

  it("the host's view once the front end is gone: an ask it never kept is stranded; a kept or answered one is not", async () => {
    const k = cluster('ti-stranded');
    const front = new Liveness(c, k.states.keys.front('F'), 400, 100);
    await front.start();
    const job = await runningTask(k, 'S');
    await k.f.ask('owner', 'S', 'elicitation', { ...ELICIT, relayId: 'kept' }, 600_000, 'waiting');
    await k.f.ask('owner', 'S', 'elicitation', { ...ELICIT, relayId: 'answered' }, 600_000, 'waiting');
    const answered = (await k.g.questions('S')).find((q) => q.relayId === 'answered')!;
    expect(await k.g.claim('owner', 'S', answered, yes('x'))).toBe('sent');
    // While the front end lives, nothing is stranded (a question may still be on its way to Redis).
    expect(await k.states.stranded(job, 'S', ['kept', 'answered', 'lost'])).toEqual([]);
    await front.stop();
    expect(await k.states.stranded(job, 'S', ['kept', 'answered', 'lost'])).toEqual(['lost']);
  });
});
