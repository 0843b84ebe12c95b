/**
 * The Redis task store (src/remote/tasks/task-store.ts, task-lua.ts) and its hooks
 * in the per-job scripts (lua.ts), against a real redis-server, with two
 * stores standing for two front ends of one queue: the limits, the first
 * settle, a cancel decided on the job's state, a task's job outliving its
 * front end with its outcome left in the task record, list pages, the ttl.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { InvalidCursorError, TaskLimitError } from '../dist/src/errors.js';
import { JobStates } from '../dist/src/remote/lua/job-states.js';
import { taskJobId } from '../dist/src/remote/keys.js';
import { Liveness } from '../dist/src/remote/liveness.js';
import { RedisTaskStore } from '../dist/src/remote/tasks/task-store.js';
import { cancelledAnswer, taskSettlement } from '../dist/src/tasks/answer.js';
import { CANCELLED_BY_REQUEST as BY_REQUEST } from '../dist/src/tasks/task-jobs.js';
import { resolveLimits } from '../dist/src/tasks/memory-store.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';

let redis: RedisProcess;
let c: Redis;
let sub: Redis;
beforeAll(async () => {
  redis = await startRedis();
  c = redis.client();
  sub = redis.client();
});
afterAll(async () => redis?.stop());

function stores(queue: string, limits = {}) {
  const states = new JobStates(c, queue);
  const options = { ...resolveLimits(limits), settlementOf: taskSettlement, waitPollMs: 20 };
  return {
    states,
    f: new RedisTaskStore(c, states, 'F', undefined, options),
    g: new RedisTaskStore(c, states, 'G', undefined, options),
  };
}
const outcome = (jobId: string, text: string) =>
  JSON.stringify({ j: jobId, t: 'o', o: { kind: 'completed', result: { content: [{ type: 'text', text }] } }, h: 'H' });

describe('tasks in Redis', () => {
  it("a task's job outlives its front end: not orphaned, its outcome lands in the record, and another front end settles the task from it", async () => {
    const { states, f, g } = stores('t1');
    const front = new Liveness(c, states.keys.front('F'), 400, 100);
    await front.start();
    const task = await f.create('owner', 60_000, 'T1', 'spin');
    const job = taskJobId('T1');
    await states.create(job, 'F', 'T1');
    await states.create('plain', 'F'); // a plain call of the same front end, for contrast
    expect(await states.take(job, 'F', 'H', 'tok')).toBe('running');
    expect(await states.take('plain', 'F', 'H', 'tok2')).toBe('running');
    await front.stop(); // the front end is gone
    expect(await states.check('plain', 'F', 'tok2')).toBe('orphan');
    expect(await states.check(job, 'F', 'tok')).toBe('running');
    expect((await g.get('owner', 'T1'))?.task.status).toBe('working');
    expect(await states.respond(job, 'F', 'tok', outcome(job, 'done'))).toBe(true);
    const read = await g.get('owner', 'T1');
    expect(read).toMatchObject({
      task: { taskId: 'T1', status: 'completed', createdAt: task.createdAt },
      answer: { kind: 'result', result: { content: [{ type: 'text', text: 'done' }] } },
    });
    // Settled once: a later settle by anyone changes nothing.
    expect(await f.settle('owner', 'T1', 'cancelled', { kind: 'error', code: -32800, message: 'x' })).toBeUndefined();
    expect((await f.get('owner', 'T1'))?.task.status).toBe('completed');
    // Another owner sees nothing.
    expect(await g.get('someone else', 'T1')).toBeUndefined();
  });

  it('a job whose task record is gone (expired, or never stored) is an orphan as before, and its outcome recreates no record', async () => {
    const { states, f } = stores('t2');
    await f.create('owner', 50, 'T2', 'spin');
    const job = taskJobId('T2');
    await states.create(job, 'F', 'T2'); // F has no liveness key at all
    await new Promise((r) => setTimeout(r, 120)); // the task's ttl passes
    expect(await c.exists(states.keys.task('T2'))).toBe(0);
    expect(await states.take(job, 'F', 'H', 'tok')).toBe('orphan');
    const front = new Liveness(c, states.keys.front('F'));
    await front.start();
    await states.create('job-b', 'F', 'never-stored');
    expect(await states.take('job-b', 'F', 'H', 'tok')).toBe('running');
    expect(await states.respond('job-b', 'F', 'tok', outcome('job-b', 'x'))).toBe(true);
    expect(await c.exists(states.keys.task('never-stored'))).toBe(0);
    await front.stop();
  });

  it('tasks/cancel through another front end is decided on the job state: queued and running win (the host hears it), completion first wins over it', async () => {
    const { states, f, g } = stores('t3');
    await new Liveness(c, states.keys.front('F')).start();
    const heard: string[] = [];
    await sub.subscribe(states.keys.cancelChannel);
    sub.on('message', (_ch, m) => heard.push(m));
    for (const id of ['Q', 'R', 'C']) {
      await f.create('owner', 60_000, id, 'spin');
      await states.create(taskJobId(id), 'F', id);
    }
    expect(await states.take(taskJobId('R'), 'F', 'H', 'tr')).toBe('running');
    expect(await states.take(taskJobId('C'), 'F', 'H', 'tc')).toBe('running');
    expect(await states.respond(taskJobId('C'), 'F', 'tc', outcome(taskJobId('C'), 'first'))).toBe(true);
    const cancelled = (id: string) => cancelledAnswer(id);
    expect(await g.cancelJob('someone else', 'Q', cancelled('Q'), BY_REQUEST)).toBe('unknown');
    expect(await g.cancelJob('owner', 'Q', cancelled('Q'), BY_REQUEST)).toBe('cancelled-queued');
    expect(await g.cancelJob('owner', 'R', cancelled('R'), BY_REQUEST)).toBe('cancelled-running');
    expect(await g.cancelJob('owner', 'C', cancelled('C'), BY_REQUEST)).toBe('too-late');
    // A won cancel settled the task in its step: the front end holding the job, hearing of the stop, cannot reword it.
    for (const id of ['Q', 'R']) {
      expect((await f.get('owner', id))?.task).toMatchObject({ status: 'cancelled', statusMessage: BY_REQUEST });
      expect(await f.settle('owner', id, 'cancelled', cancelled(id), 'The task was cancelled.')).toBeUndefined();
      expect((await g.get('owner', id))?.task).toMatchObject({ status: 'cancelled', statusMessage: BY_REQUEST });
    }
    expect(await states.take(taskJobId('Q'), 'F', 'H', 'tq')).toBe('cancelled');
    expect(await states.respond(taskJobId('R'), 'F', 'tr', outcome(taskJobId('R'), 'late'))).toBe(false);
    await new Promise((r) => setTimeout(r, 100));
    expect(heard).toEqual([taskJobId('R')]);
    expect((await g.get('owner', 'C'))?.task.status).toBe('completed');
    await sub.unsubscribe();
    sub.removeAllListeners('message');
  });

  it('input_required and back, seen by every front end, never over a settled task nor for another owner', async () => {
    const { states, f, g } = stores('t-mark');
    const front = new Liveness(c, states.keys.front('F'), 60_000, 1000); // F, the creator, stays alive: its job is its to answer
    await front.start();
    await f.create('owner', 60_000, 'M1', 'greet_user');
    await states.create(taskJobId('M1'), 'F', 'M1');
    expect(await f.mark('someone else', 'M1', 'input_required')).toBeUndefined();
    expect(await f.mark('owner', 'M1', 'input_required', 'waiting for the client')).toMatchObject({
      status: 'input_required',
      statusMessage: 'waiting for the client',
    });
    expect((await g.get('owner', 'M1'))?.task).toMatchObject({
      status: 'input_required',
      statusMessage: 'waiting for the client',
    });
    expect(await f.mark('owner', 'M1', 'working')).toMatchObject({ status: 'working' });
    expect((await g.get('owner', 'M1'))?.task.statusMessage).toBeUndefined();
    expect(await g.settle('owner', 'M1', 'completed', { kind: 'result', result: { content: [] } })).toMatchObject({
      status: 'completed',
    });
    expect(await f.mark('owner', 'M1', 'input_required')).toBeUndefined();
    expect((await f.get('owner', 'M1'))?.task.status).toBe('completed');
    expect(await f.mark('owner', 'no-such-task', 'working')).toBeUndefined();
    await front.stop();
  });

  it('the working-task limits hold across front ends; a settled task frees its place; the record carries the ttl', async () => {
    const { f, g, states } = stores('t4', { maxWorkingTasksPerSession: 2, maxWorkingTasks: 3 });
    await f.create('one', 60_000, 'A1');
    await g.create('one', 60_000, 'A2');
    await expect(f.create('one', 60_000, 'A3')).rejects.toBeInstanceOf(TaskLimitError);
    await g.create('two', 60_000, 'B1');
    await expect(f.create('three', 60_000, 'C1')).rejects.toThrow(/in all sessions/);
    expect(await g.settle('one', 'A1', 'completed', { kind: 'result', result: { content: [] } })).toMatchObject({
      status: 'completed',
    });
    await f.create('one', 30_000, 'A3');
    const pttl = await c.pttl(states.keys.task('A3'));
    expect(pttl).toBeGreaterThan(25_000);
    expect(pttl).toBeLessThanOrEqual(30_000);
  });

  it("a caller's 2025 sessions count against its per-caller limit, shared with its 2026 tasks on every front end; a closed session's tasks stay counted until they end", async () => {
    const { f, g } = stores('t4c', { maxWorkingTasksPerSession: 3, maxWorkingTasks: 10 });
    f.countAs('s1', 'alice');
    f.countAs('s2', 'alice');
    await f.create('s1', 60_000, 'S1');
    await f.create('s2', 60_000, 'S2');
    // Alice's 2026 task through the other front end is her third.
    await g.create('alice', 60_000, 'A1');
    // A fourth, through either session or as alice anywhere, is past her limit: not the session's own count (one each).
    await expect(f.create('s1', 60_000, 'S3')).rejects.toThrow(/per-caller/);
    await expect(g.create('alice', 60_000, 'A2')).rejects.toBeInstanceOf(TaskLimitError);
    // Bob's sessions are his own.
    f.countAs('s3', 'bob');
    await f.create('s3', 60_000, 'B1');
    // A settled session task frees its place in alice's count.
    expect(await f.settle('s1', 'S1', 'completed', { kind: 'result', result: { content: [] } })).toMatchObject({
      status: 'completed',
    });
    await g.create('alice', 60_000, 'A2');
    // Session s2 closes: uncounted, then dropped; its working task leaves alice's count with it.
    f.uncount('s2');
    expect((await f.dropOwner('s2')).map((t) => t.taskId)).toEqual(['S2']);
    await g.create('alice', 60_000, 'A3');
    await expect(g.create('alice', 60_000, 'A4')).rejects.toThrow(/per-caller/);
    // Without countAs a session counts as itself.
    await f.create('s9', 60_000, 'N1');
  });

  it("lists an owner's tasks oldest first, a page at a time, whichever front end made them; a bad cursor is refused; a dropped owner is gone", async () => {
    const { f, g } = stores('t5', { pageSize: 2 });
    for (let i = 0; i < 5; i++) await (i % 2 ? g : f).create('lister', 60_000, `L${i}`);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await g.list('lister', cursor);
      expect(page.tasks.length).toBeLessThanOrEqual(2);
      seen.push(...page.tasks.map((t) => t.taskId));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(seen).toEqual(['L0', 'L1', 'L2', 'L3', 'L4']);
    await expect(f.list('lister', 'nope')).rejects.toBeInstanceOf(InvalidCursorError);
    expect(await f.count('lister')).toBe(5);
    expect((await f.dropOwner('lister')).map((t) => t.taskId)).toEqual(['L0', 'L1', 'L2', 'L3', 'L4']);
    expect(await g.list('lister')).toEqual({ tasks: [] });
  });
});
