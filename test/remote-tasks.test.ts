/**
 * Task-augmented tool calls through the queue backend: a `serve --redis`
 * front end keeps the tasks in Redis (its session's), worker hosts (real processes, a real
 * redis-server) run their jobs. Every task message is schema-checked
 * (TaskWire.violations).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import type { Task } from '@modelcontextprotocol/sdk/types.js';
import { sleep, until } from './helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import { NO_LEFTOVERS, settledLeftovers, startHost, type HostProcess } from './remote-helpers.js';
import { expectProgressBeforeTerminal, TASK_TOOLS, TaskWire, type Answer } from './task-wire.js';

const Q = 'rtasks';
let redis: RedisProcess;
let r: Redis;
let hosts: HostProcess[] = [];
let w: TaskWire;

beforeAll(async () => {
  redis = await startRedis();
  r = redis.client();
  hosts = await Promise.all([0, 1].map(() => startHost(redis.url, Q, ['--threads', '1', '--tools', TASK_TOOLS])));
  w = new TaskWire(['--redis', redis.url, '--queue', Q]);
  await w.initialize();
  // The first call may come before the front end is on Redis: wait until a plain one goes through.
  await until(
    async () => {
      const a = await w.request('tools/call', { name: 'spin', arguments: { ms: 0 } }, 10_000);
      return 'result' in a && a.result.isError !== true;
    },
    15_000,
    'the front end on Redis',
  );
  // A host rewrites its counters just after it answers: wait for that one call, so later deltas count only their own.
  await until(async () => sum(await hostStats(), 'answered') === 1, 5000, 'the readiness call counted on its host');
}, 60_000);
afterAll(async () => {
  if (w) {
    expect(w.violations).toEqual([]);
    await w.close();
  }
  await Promise.all(hosts.map((h) => h.stop()));
  await redis?.stop();
});

const errorOf = (a: Answer) => ('error' in a ? a.error : undefined);
const taskOf = (a: Answer) => ('result' in a ? (a.result as unknown as Task) : undefined);
const hostStats = () => Promise.all(hosts.map((h) => h.stats(r)));
const sum = (rows: Record<string, number>[], key: string) => rows.reduce((n, s) => n + (s[key] ?? 0), 0);
const withoutMeta = (a: Answer) => {
  if (!('result' in a)) throw new Error(`expected a result, got ${JSON.stringify(a)}`);
  const { _meta, ...rest } = a.result;
  return rest;
};

describe('tasks across hosts', () => {
  it("a task created at a serve --redis front end runs on a worker host; tasks/result is exactly the plain call's result", async () => {
    const before = await hostStats();
    const task = await w.createTask('count_primes', { limit: 100_000 }, { ttl: 60_000 });
    expect(task).toMatchObject({ status: 'working', ttl: 60_000 });
    const result = await w.request('tasks/result', { taskId: task.taskId });
    const plain = await w.request('tools/call', { name: 'count_primes', arguments: { limit: 100_000 } });
    expect(withoutMeta(result)).toEqual(withoutMeta(plain));
    expect((withoutMeta(result) as { isError?: boolean }).isError).toBeUndefined();
    // Both ran on the hosts (the front end has no pool).
    await until(
      async () => sum(await hostStats(), 'answered') - sum(before, 'answered') === 2,
      5000,
      'both answered by hosts',
    );
    expect(taskOf(await w.request('tasks/get', { taskId: task.taskId }))?.status).toBe('completed');
    expect(w.statusNotes(task.taskId).map((t) => t.status)).toEqual(['completed']);
  });

  it('tasks/cancel of a task running on a worker host: the work stops there, the task is cancelled, no result ever', async () => {
    const before = await hostStats();
    const long = await w.createTask('spin', { ms: 60_000, stageMs: 1 });
    await until(async () => sum(await hostStats(), 'running') === 1, 10_000, 'the long task to run on a host');
    const waiting = w.request('tasks/result', { taskId: long.taskId });
    const cancel = await w.request('tasks/cancel', { taskId: long.taskId });
    expect(taskOf(cancel)).toMatchObject({
      taskId: long.taskId,
      status: 'cancelled',
      statusMessage: 'The task was cancelled by request.',
    });
    expect(errorOf(await waiting)?.code).toBe(-32800);
    await until(
      async () => sum(await hostStats(), 'cancelsRelayed') - sum(before, 'cancelsRelayed') === 1,
      5000,
      'the cancel relayed to the host',
    );
    await until(
      async () => {
        const s = await hostStats();
        return sum(s, 'running') + sum(s, 'stopping') === 0 && sum(s, 'stopped') - sum(before, 'stopped') === 1;
      },
      5000,
      'the cancelled work stopped on its host',
    );
    const after = await hostStats();
    expect(sum(after, 'hardKilled')).toBe(sum(before, 'hardKilled')); // stopped at a checkpoint, its thread kept
    expect(sum(after, 'threads')).toBe(sum(before, 'threads'));
    // The next call is answered at once (60 s of work would not let it through).
    const t0 = Date.now();
    const next = await w.request('tools/call', { name: 'spin', arguments: { ms: 1 } }, 10_000);
    expect(Date.now() - t0).toBeLessThan(3000);
    expect((withoutMeta(next) as { isError?: boolean }).isError).toBeUndefined();
    await sleep(500);
    expect(taskOf(await w.request('tasks/get', { taskId: long.taskId }))?.status).toBe('cancelled');
    expect(errorOf(await w.request('tasks/result', { taskId: long.taskId }))).toEqual({
      code: -32800,
      message: `task ${long.taskId} was cancelled: it has no result`,
    });
    expect(w.statusNotes(long.taskId).map((t) => t.status)).toEqual(['cancelled']);
    expect(await w.stats()).toMatchObject({ tasksCancelled: 1, tasksWorking: 0, inFlight: 0 });
  });

  it('completion just before tasks/cancel: the task stays completed and the cancel gets -32602', async () => {
    const task = await w.createTask('spin', { ms: 1 });
    const first = await w.request('tasks/result', { taskId: task.taskId });
    expect((withoutMeta(first).content as { text: string }[])[0]!.text).toMatch(/^spun 1 slices/);
    expect(errorOf(await w.request('tasks/cancel', { taskId: task.taskId }))).toEqual({
      code: -32602,
      message: "Cannot cancel task: already in terminal status 'completed'",
    });
    expect(taskOf(await w.request('tasks/get', { taskId: task.taskId }))?.status).toBe('completed');
    expect(withoutMeta(await w.request('tasks/result', { taskId: task.taskId }))).toEqual(withoutMeta(first));
  });

  it('completion won on the host while tasks/cancel is on its way: the task is completed, the cancel gets -32602', async () => {
    // The window between the host's running → responding and the outcome's arrival at the front end, held open:
    // the front end is stopped, reads tasks/cancel before the outcome message when it resumes.
    for (let trial = 0; trial < 3; trial++) {
      const before = await hostStats();
      const task = await w.createTask('spin', { ms: 1500, stageMs: 1 }); // long enough for the host's counters (refreshed every second) to show it running
      await until(async () => sum(await hostStats(), 'running') === 1, 10_000, 'the task to run on a host');
      process.kill(w.child.pid!, 'SIGSTOP');
      let cancel: Promise<Answer>;
      try {
        cancel = w.request('tasks/cancel', { taskId: task.taskId }); // in the pipe, read first on resume
        await until(
          async () => sum(await hostStats(), 'answered') - sum(before, 'answered') === 1,
          10_000,
          'completion to win on the host',
        );
      } finally {
        process.kill(w.child.pid!, 'SIGCONT');
      }
      expect(errorOf(await cancel)).toEqual({
        code: -32602,
        message: "Cannot cancel task: already in terminal status 'completed'",
      });
      expect(taskOf(await w.request('tasks/get', { taskId: task.taskId }))?.status).toBe('completed');
      expect(
        (withoutMeta(await w.request('tasks/result', { taskId: task.taskId })).content as { text: string }[])[0]!.text,
      ).toMatch(/^spun 1500 slices/);
      expect(w.statusNotes(task.taskId).map((t) => t.status)).toEqual(['completed']);
      expect(sum(await hostStats(), 'stopped')).toBe(sum(before, 'stopped'));
    }
  });

  it('progress keeps the original token for a task across hosts and stops at its terminal status', async () => {
    const done = await w.createTask('spin', { ms: 400, stageMs: 10 }, { progressToken: 'tok-done' });
    await w.request('tasks/result', { taskId: done.taskId });
    const cancelled = await w.createTask('spin', { ms: 60_000, stageMs: 10 }, { progressToken: 77 });
    await w.until(
      () => w.lines.some((m) => m.method === 'notifications/progress' && m.params?.progressToken === 77),
      10_000,
      'progress of the long task',
    );
    expect(taskOf(await w.request('tasks/cancel', { taskId: cancelled.taskId }))?.status).toBe('cancelled');
    await until(
      async () => sum(await hostStats(), 'running') + sum(await hostStats(), 'stopping') === 0,
      10_000,
      'the host to stop the work',
    );
    await sleep(500); // anything the host published before it stopped has had time to arrive: none of it may be sent
    expectProgressBeforeTerminal(w.lines, [
      [done, 'tok-done'],
      [cancelled, 77],
    ]);
  });

  it('a task still working on a host when its ttl passes is stopped there and counted expired', async () => {
    const before = await hostStats();
    const beforeFront = await w.stats();
    const task = await w.createTask('spin', { ms: 60_000, stageMs: 1 }, { ttl: 500 });
    await until(
      async () => (await w.stats()).tasksExpired === beforeFront.tasksExpired! + 1,
      10_000,
      'the task to expire',
    );
    await until(
      async () => {
        const s = await hostStats();
        return sum(s, 'running') + sum(s, 'stopping') === 0 && sum(s, 'stopped') - sum(before, 'stopped') === 1;
      },
      5000,
      'its work stopped on its host',
    );
    expect(sum(await hostStats(), 'hardKilled')).toBe(sum(before, 'hardKilled'));
    expect(errorOf(await w.request('tasks/get', { taskId: task.taskId }))?.code).toBe(-32602);
    expect(await w.stats()).toMatchObject({ tasksWorking: 0, inFlight: 0 });
  });

  it('a front end whose client goes away stops its working tasks on the hosts', async () => {
    const other = new TaskWire(['--redis', redis.url, '--queue', Q]);
    await other.initialize();
    await until(
      async () => {
        const a = await other.request('tools/call', { name: 'spin', arguments: { ms: 0 } }, 10_000);
        return 'result' in a && a.result.isError !== true;
      },
      15_000,
      'the second front end on Redis',
    );
    const before = await hostStats();
    await other.createTask('spin', { ms: 60_000, stageMs: 1 });
    await until(async () => sum(await hostStats(), 'running') === 1, 10_000, 'the task to run on a host');
    expect(await other.close()).toBe(0); // stdin closed: the MCP way to shut a stdio server down
    await until(
      async () => {
        const s = await hostStats();
        return sum(s, 'running') + sum(s, 'stopping') === 0 && sum(s, 'stopped') - sum(before, 'stopped') === 1;
      },
      10_000,
      "the closed session's task stopped on its host",
    );
    expect(sum(await hostStats(), 'hardKilled')).toBe(sum(before, 'hardKilled'));
    expect(other.violations).toEqual([]);
  });

  it('leaves nothing behind: no job state, no BullMQ jobs, no calls in flight', async () => {
    expect(await settledLeftovers(r, Q)).toEqual(NO_LEFTOVERS);
    expect(await w.stats()).toMatchObject({ inFlight: 0, tasksWorking: 0 });
  });
});
