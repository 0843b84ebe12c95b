/**
 * Task-augmented tool calls over stdio, on the raw wire: every task message
 * is checked against the SDK's schemas (TaskWire.violations).
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ListToolsResultSchema, type Task } from '@modelcontextprotocol/sdk/types.js';
import { sleep } from './helpers.js';
import { expectProgressBeforeTerminal, TaskWire, type Answer } from './task-wire.js';

const servers: TaskWire[] = [];
async function start(args: string[] = []): Promise<TaskWire> {
  const w = new TaskWire(args);
  servers.push(w);
  await w.initialize();
  return w;
}
afterEach(async () => {
  for (const w of servers.splice(0)) {
    expect(w.violations).toEqual([]);
    await w.close();
  }
});

const errorOf = (a: Answer) => ('error' in a ? a.error : undefined);
const taskOf = (a: Answer) => ('result' in a ? (a.result as unknown as Task) : undefined);
const textOf = (a: Answer) => ('result' in a ? (a.result.content as { text: string }[])[0]?.text : undefined);

describe('tasks over stdio', () => {
  it("declares the tasks capability and each tool's execution.taskSupport", async () => {
    const w = new TaskWire();
    servers.push(w);
    const init = await w.ok('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 't', version: '1' },
    });
    w.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect((init.capabilities as Record<string, unknown>).tasks).toEqual({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const list = ListToolsResultSchema.parse(await w.ok('tools/list'));
    const support = Object.fromEntries(list.tools.map((t) => [t.name, t.execution?.taskSupport]));
    expect(support).toMatchObject({
      spin: 'optional',
      count_primes: 'optional',
      hash_file: 'optional',
      compress: 'optional',
      render_mandelbrot: 'optional',
      only_task: 'required',
      never_task: 'forbidden',
      undeclared_task: 'forbidden',
    });
  });

  it('answers at once with a working task, and tasks/result gives what the plain call gives', async () => {
    const w = await start();
    const task = await w.createTask('spin', { ms: 30 }, { ttl: 60_000 });
    expect(task).toMatchObject({ status: 'working', ttl: 60_000, pollInterval: 500 });
    expect(typeof task.taskId).toBe('string');
    const result = await w.request('tasks/result', { taskId: task.taskId });
    expect(textOf(result)).toMatch(/^spun 30 slices in /);
    const plain = await w.ok('tools/call', { name: 'spin', arguments: { ms: 30 } });
    expect(Object.keys(plain).sort()).toEqual(
      Object.keys((result as { result: Record<string, unknown> }).result)
        .filter((k) => k !== '_meta')
        .sort(),
    );
    expect(taskOf(await w.request('tasks/get', { taskId: task.taskId }))?.status).toBe('completed');
    expect(w.statusNotes(task.taskId).map((t) => t.status)).toEqual(['completed']);
  });

  it('tasks/cancel of a running task stops its work, frees its slot, and the task stays cancelled with no result', async () => {
    const w = await start(['--threads', '1']);
    const long = await w.createTask('spin', { ms: 60_000 });
    await w.until(async () => (await w.stats()).running === 1, 10_000, 'the long task to run');
    const next = await w.createTask('spin', { ms: 20 }); // queued behind it: one thread
    expect((await w.stats()).queued).toBe(1);
    const waiting = w.request('tasks/result', { taskId: long.taskId }); // blocks until the task is terminal
    const cancel = await w.request('tasks/cancel', { taskId: long.taskId });
    expect(errorOf(await waiting)?.code).toBe(-32800); // released by the cancel, without the result
    expect(taskOf(cancel)).toMatchObject({
      taskId: long.taskId,
      status: 'cancelled',
      statusMessage: 'The task was cancelled by request.',
    });
    // The slot passes on: the queued task runs to completion while the long one is being stopped.
    expect(textOf(await w.request('tasks/result', { taskId: next.taskId }, 10_000))).toMatch(/^spun 20 slices/);
    await w.until(
      async () => {
        const s = await w.stats();
        return s.running === 0 && s.stopping === 0;
      },
      10_000,
      'the cancelled work to stop',
    );
    await sleep(200);
    const s = await w.stats();
    expect(s).toMatchObject({
      hardKilled: 0,
      cancelled: 1,
      tasksCancelled: 1,
      tasksCompleted: 1,
      tasksWorking: 0,
      tasksCreated: 2,
    });
    expect(taskOf(await w.request('tasks/get', { taskId: long.taskId }))?.status).toBe('cancelled');
    const result = await w.request('tasks/result', { taskId: long.taskId });
    expect(errorOf(result)).toEqual({ code: -32800, message: `task ${long.taskId} was cancelled: it has no result` });
    expect(w.statusNotes(long.taskId).map((t) => t.status)).toEqual(['cancelled']);
    // A second cancel is refused: the task is terminal.
    expect(errorOf(await w.request('tasks/cancel', { taskId: long.taskId }))).toEqual({
      code: -32602,
      message: "Cannot cancel task: already in terminal status 'cancelled'",
    });
  });

  it('tasks/cancel of a queued task: it never runs', async () => {
    const w = await start(['--threads', '1', '--spare-threads', '0']);
    const first = await w.createTask('spin', { ms: 300 });
    const queued = await w.createTask('spin', { ms: 10 });
    expect(taskOf(await w.request('tasks/cancel', { taskId: queued.taskId }))?.status).toBe('cancelled');
    await w.request('tasks/result', { taskId: first.taskId });
    const s = await w.stats();
    expect(s).toMatchObject({ cancelled: 1, completed: 1, tasksCancelled: 1, tasksCompleted: 1 });
  });

  it('completion just before tasks/cancel: the task stays completed and the cancel gets -32602', async () => {
    const w = await start();
    const task = await w.createTask('spin', { ms: 1 });
    const first = await w.request('tasks/result', { taskId: task.taskId });
    expect(textOf(first)).toMatch(/^spun 1 slices/);
    expect(errorOf(await w.request('tasks/cancel', { taskId: task.taskId }))).toEqual({
      code: -32602,
      message: "Cannot cancel task: already in terminal status 'completed'",
    });
    expect(taskOf(await w.request('tasks/get', { taskId: task.taskId }))?.status).toBe('completed');
    expect(textOf(await w.request('tasks/result', { taskId: task.taskId }))).toBe(textOf(first));
    expect(await w.stats()).toMatchObject({ tasksCompleted: 1, tasksCancelled: 0, cancelled: 0 });
  });

  it('unknown and expired task ids get -32602 from tasks/get, tasks/result and tasks/cancel, and nothing else changes', async () => {
    const w = await start();
    const keeper = await w.createTask('spin', { ms: 60_000 });
    // A ttl that outlasts a 1 ms spin on a loaded machine (300 ms did not, once: the task expired still working).
    const short = await w.createTask('spin', { ms: 1 }, { ttl: 3000 });
    await w.request('tasks/result', { taskId: short.taskId });
    await w.until(async () => (await w.stats()).tasksStored === 1, 30_000, 'the short task to expire');
    const before = await w.stats();
    for (const taskId of ['no-such-task', short.taskId]) {
      for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
        const e = errorOf(await w.request(method, { taskId }));
        expect(e?.code).toBe(-32602);
        expect(e?.message).toMatch(/Task not found/);
      }
    }
    const list = await w.ok('tasks/list');
    expect((list.tasks as Task[]).map((t) => t.taskId)).toEqual([keeper.taskId]);
    expect(taskOf(await w.request('tasks/get', { taskId: keeper.taskId }))?.status).toBe('working');
    const after = await w.stats();
    for (const k of [
      'tasksCreated',
      'tasksWorking',
      'tasksCancelled',
      'tasksCompleted',
      'tasksExpired',
      'tasksStored',
      'cancelled',
      'running',
    ] as const)
      expect(after[k]).toBe(before[k]);
    expect(after.tasksExpired).toBe(0); // the short task had completed before its ttl: removed, not "expired while working"
  });

  it('a task still working when its ttl passes is stopped and counted expired', async () => {
    const w = await start();
    const task = await w.createTask('spin', { ms: 60_000 }, { ttl: 400 });
    await w.until(async () => (await w.stats()).tasksExpired === 1, 5_000, 'the task to expire');
    await w.until(
      async () => {
        const s = await w.stats();
        return s.running === 0 && s.stopping === 0;
      },
      5_000,
      'its work to stop',
    );
    expect(errorOf(await w.request('tasks/get', { taskId: task.taskId }))?.code).toBe(-32602);
    expect(await w.stats()).toMatchObject({
      tasksCreated: 1,
      tasksWorking: 0,
      tasksExpired: 1,
      tasksStored: 0,
      hardKilled: 0,
    });
  });

  it('the expiry sweep runs only while tasks are held: once they are gone the server sleeps, and a later task still expires', async () => {
    const w = await start();
    const pid = w.child.pid!;
    const wakeUps = () =>
      Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8'))![1]);
    // The second task comes after the first one's sweep found nothing left and stopped: it must restart it.
    for (const round of [1, 2]) {
      await w.createTask('spin', { ms: 60_000 }, { ttl: 300 });
      await w.until(async () => (await w.stats()).tasksExpired === round, 5_000, `task ${round} to expire`);
      await w.until(
        async () => {
          const s = await w.stats();
          return s.running === 0 && s.stopping === 0 && s.tasksStored === 0;
        },
        5_000,
        'its work to stop',
      );
    }
    // A sweep every second would wake the main thread in each of these 8 seconds (a loaded machine delays a timer by
    // milliseconds, not seconds). V8's idle-time garbage collector may still wake it in a burst or two.
    const seconds: number[] = [];
    for (let s = 0; s < 8; s++) {
      const before = wakeUps();
      await sleep(1_000);
      seconds.push(wakeUps() - before);
    }
    expect(seconds.filter((n) => n > 0).length, `wake-ups per second: ${seconds.join(' ')}`).toBeLessThan(5);
  });

  it('forbidden and required tools get -32601 for the wrong kind of call', async () => {
    const w = await start();
    for (const name of ['never_task', 'undeclared_task']) {
      const e = errorOf(await w.request('tools/call', { name, arguments: {}, task: {} }));
      expect(e?.code).toBe(-32601);
      expect(e?.message).toContain(`tool '${name}' cannot run as a task`);
    }
    const required = errorOf(await w.request('tools/call', { name: 'only_task', arguments: {} }));
    expect(required?.code).toBe(-32601);
    expect(required?.message).toContain("tool 'only_task' runs only as a task");
    const ok = await w.createTask('only_task', { ms: 1 });
    expect(textOf(await w.request('tasks/result', { taskId: ok.taskId }))).toBe('only_task spun 1 ms');
    expect(textOf(await w.request('tools/call', { name: 'never_task', arguments: { ms: 1 } }))).toBe(
      'never_task spun 1 ms',
    );
    const unknown = errorOf(await w.request('tools/call', { name: 'nope', arguments: {}, task: {} }));
    expect(unknown?.code).toBe(-32602);
    expect((await w.stats()).tasksCreated).toBe(1);
  });

  it('two tasks/cancel back to back: exactly one is accepted', async () => {
    const w = await start();
    const task = await w.createTask('spin', { ms: 60_000 });
    await w.until(async () => (await w.stats()).running === 1, 10_000, 'the task to run');
    const answers = await Promise.all([
      w.request('tasks/cancel', { taskId: task.taskId }),
      w.request('tasks/cancel', { taskId: task.taskId }),
    ]);
    expect(answers.filter((a) => taskOf(a)?.status === 'cancelled')).toHaveLength(1);
    expect(answers.map(errorOf).filter(Boolean)).toEqual([
      { code: -32602, message: "Cannot cancel task: already in terminal status 'cancelled'" },
    ]);
    expect(await w.stats()).toMatchObject({ tasksCancelled: 1, cancelled: 1 });
  });

  it('limits: working tasks in all sessions; a finished one frees its place', async () => {
    const w = await start(['--max-working-tasks', '1']);
    const long = await w.createTask('spin', { ms: 60_000 });
    const refused = errorOf(await w.request('tools/call', { name: 'spin', arguments: { ms: 1 }, task: {} }));
    expect(refused).toEqual({
      code: -32000,
      message: 'total task limit reached: 1 working tasks in all sessions (--max-working-tasks); try again later',
    });
    expect(taskOf(await w.request('tasks/cancel', { taskId: long.taskId }))?.status).toBe('cancelled');
    await w.createTask('spin', { ms: 1 }); // the cancelled one is finished: it no longer counts
    expect(await w.stats()).toMatchObject({ tasksCreated: 2, tasksStored: 2 });
  });

  it('limits: working tasks per session, and the ttl cap', async () => {
    const w = await start(['--max-working-tasks-per-session', '2', '--max-task-ttl-ms', '1000']);
    const a = await w.createTask('spin', { ms: 60_000 }, { ttl: 999_999 });
    expect(a.ttl).toBe(1000);
    const b = await w.createTask('spin', { ms: 60_000 }, { ttl: 500 });
    const refused = errorOf(await w.request('tools/call', { name: 'spin', arguments: { ms: 1 }, task: {} }));
    expect(refused).toEqual({
      code: -32000,
      message:
        'per-caller task limit reached: this caller (or 2025 session) has 2 working tasks (--max-working-tasks-per-session); wait for one to finish or cancel one',
    });
    expect(taskOf(await w.request('tasks/get', { taskId: a.taskId }))?.status).toBe('working');
    expect(taskOf(await w.request('tasks/cancel', { taskId: b.taskId }))?.status).toBe('cancelled');
    const c = await w.createTask('spin', { ms: 1 }); // b finished: its place is free while it is still held
    expect(taskOf(await w.request('tasks/get', { taskId: b.taskId }))?.status).toBe('cancelled');
    await w.until(async () => (await w.stats()).tasksStored === 0, 5_000, 'the tasks to expire');
    expect(c.ttl).toBe(1000); // the default (10 min) is capped too
    expect(await w.stats()).toMatchObject({ tasksCreated: 3, tasksExpired: 1, tasksEvicted: 0 });
  });

  it('300 short tasks in one session are all accepted and kept: only working ones count, and they stay under the limit', async () => {
    const LIMIT = 8;
    const w = await start(['--max-working-tasks-per-session', String(LIMIT)]);
    const ids: string[] = [];
    let mostWorking = 0;
    while (ids.length < 300) {
      // A batch up to the limit, then its results: the next batch starts with every earlier task finished.
      const batch = await Promise.all(Array.from({ length: LIMIT }, () => w.createTask('spin', { ms: 1 })));
      mostWorking = Math.max(mostWorking, (await w.stats()).tasksWorking!);
      for (const t of batch) expect(textOf(await w.request('tasks/result', { taskId: t.taskId }))).toMatch(/^spun /);
      ids.push(...batch.map((t) => t.taskId));
    }
    expect(mostWorking).toBeLessThanOrEqual(LIMIT);
    expect(await w.stats()).toMatchObject({
      tasksCreated: 304,
      tasksCompleted: 304,
      tasksWorking: 0,
      tasksStored: 304,
      tasksEvicted: 0,
    });
    // Well past the old 256 held per session, the first is still there to read.
    expect(taskOf(await w.request('tasks/get', { taskId: ids[0]! }))?.status).toBe('completed');
  });

  it('--max-finished-task-bytes removes the oldest finished tasks first (by when they finished); a removed one reads like an expired one', async () => {
    // Each sized_result task keeps a little over 10 000 bytes (its 10 000 x's plus the task and the wrapping JSON): 3 fit in 35 000.
    const w = await start(['--max-finished-task-bytes', '35000', '--health-port', '0']);
    const first = await w.createTask('spin', { ms: 60_000 }); // created first, finishes last
    const done: string[] = [];
    for (let i = 0; i < 3; i++) {
      const t = await w.createTask('sized_result', { bytes: 10_000 });
      await w.request('tasks/result', { taskId: t.taskId });
      done.push(t.taskId);
    }
    // Three finished results of ~10 kB plus the running one: nothing removed yet.
    expect(await w.stats()).toMatchObject({ tasksStored: 4, tasksEvicted: 0 });
    expect(taskOf(await w.request('tasks/cancel', { taskId: first.taskId }))?.status).toBe('cancelled');
    // The cancelled task keeps a few hundred bytes: still within the bound, nothing removed.
    expect(await w.stats()).toMatchObject({ tasksStored: 4, tasksEvicted: 0 });
    const fourth = await w.createTask('sized_result', { bytes: 10_000 });
    await w.request('tasks/result', { taskId: fourth.taskId });
    // Four results are over the bound: the oldest finished one (done[0]) goes, not the first created (finished last).
    expect(await w.stats()).toMatchObject({ tasksStored: 4, tasksEvicted: 1, tasksCompleted: 4, tasksCancelled: 1 });
    const gone = errorOf(await w.request('tasks/get', { taskId: done[0]! }));
    const unknown = errorOf(await w.request('tasks/get', { taskId: 'no-such-task' }));
    expect(gone).toEqual({ code: -32602, message: expect.stringContaining('Task not found') });
    expect(gone?.message.replace(done[0]!, 'ID')).toBe(unknown?.message.replace('no-such-task', 'ID'));
    expect(errorOf(await w.request('tasks/result', { taskId: done[0]! }))?.code).toBe(-32602);
    for (const id of [first.taskId, done[1]!, done[2]!, fourth.taskId])
      expect('result' in (await w.request('tasks/get', { taskId: id }))).toBe(true);
    expect(((await w.ok('tasks/list')).tasks as Task[]).map((t) => t.taskId)).toEqual([
      first.taskId,
      done[1],
      done[2],
      fourth.taskId,
    ]);
    // A result larger than the whole bound is not kept at all.
    const huge = await w.createTask('sized_result', { bytes: 40_000 });
    await w.until(async () => (await w.stats()).tasksEvicted === 2, 10_000, 'the huge result to be dropped');
    expect(errorOf(await w.request('tasks/get', { taskId: huge.taskId }))?.code).toBe(-32602);
    expect(await w.stats()).toMatchObject({ tasksStored: 4 }); // and the others stay
    // Operators see the same count in the metrics.
    const metricsUrl = /health and metrics on (http:\/\/\S+)\/healthz/.exec(w.stderr)?.[1];
    expect(metricsUrl).toBeDefined();
    const metrics = await (await fetch(`${metricsUrl}/metrics`)).text();
    expect(metrics).toMatch(/^mcp_cancel_pool_tasks_evicted_total\{role="front"\} 2$/m);
  });

  it("tasks/list pages through the session's tasks with an opaque cursor; a bad cursor gets -32602", async () => {
    const w = await start();
    const ids: string[] = [];
    for (let i = 0; i < 55; i++) ids.push((await w.createTask('spin', { ms: 0 })).taskId);
    const first = await w.ok('tasks/list');
    expect((first.tasks as Task[]).length).toBe(50);
    expect(typeof first.nextCursor).toBe('string');
    const second = await w.ok('tasks/list', { cursor: first.nextCursor });
    expect(second.nextCursor).toBeUndefined();
    expect([...(first.tasks as Task[]), ...(second.tasks as Task[])].map((t) => t.taskId)).toEqual(ids);
    expect(errorOf(await w.request('tasks/list', { cursor: 'garbage' }))?.code).toBe(-32602);
  });

  it("progress keeps the original token for the task's life and stops at its terminal status", async () => {
    const w = await start();
    const done = await w.createTask('spin', { ms: 400, stageMs: 10 }, { progressToken: 'tok-done' });
    await w.request('tasks/result', { taskId: done.taskId });
    const cancelled = await w.createTask('spin', { ms: 60_000, stageMs: 10 }, { progressToken: 77 });
    await w.until(
      () => w.lines.some((m) => m.method === 'notifications/progress' && m.params?.progressToken === 77),
      10_000,
      'progress of the long task',
    );
    await w.request('tasks/cancel', { taskId: cancelled.taskId });
    await sleep(300); // the worker runs on until its next checkpoint: nothing of it may arrive
    expectProgressBeforeTerminal(w.lines, [
      [done, 'tok-done'],
      [cancelled, 77],
    ]);
  });

  it('a deadline ends the task failed with the timeout message; a tool error ends it failed with that result', async () => {
    const w = await start();
    const slow = await w.createTask('short_deadline', { ms: 10_000 });
    const r = await w.request('tasks/result', { taskId: slow.taskId });
    expect(r).toMatchObject({
      result: {
        isError: true,
        content: [{ type: 'text', text: "tool 'short_deadline' timed out after 150 ms and was stopped" }],
      },
    });
    expect(taskOf(await w.request('tasks/get', { taskId: slow.taskId }))).toMatchObject({
      status: 'failed',
      statusMessage: "tool 'short_deadline' timed out after 150 ms and was stopped",
    });
    const bad = await w.createTask('tool_error', {});
    expect(await w.request('tasks/result', { taskId: bad.taskId })).toMatchObject({
      result: { isError: true, content: [{ type: 'text', text: 'the tool says no' }] },
    });
    expect(taskOf(await w.request('tasks/get', { taskId: bad.taskId }))?.status).toBe('failed');
    const invalid = await w.createTask('spin', { ms: 'soon' });
    expect(await w.request('tasks/result', { taskId: invalid.taskId })).toMatchObject({ result: { isError: true } });
    expect(await w.stats()).toMatchObject({ tasksFailed: 3, timedOut: 1, tasksWorking: 0 });
  });

  it('a notifications/cancelled naming the id of a task-augmented tools/call changes nothing', async () => {
    const w = await start();
    const created = await w.requestWithId('call-7', 'tools/call', { name: 'spin', arguments: { ms: 300 }, task: {} });
    const task = taskOf({ result: (created as { result: { task: Record<string, unknown> } }).result.task })!;
    const before = await w.stats();
    w.send({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 'call-7', reason: 'wrong channel' },
    });
    await sleep(100);
    expect(taskOf(await w.request('tasks/get', { taskId: task.taskId }))?.status).toBe('working');
    expect(textOf(await w.request('tasks/result', { taskId: task.taskId }))).toMatch(/^spun 300 slices/);
    const after = await w.stats();
    expect(after).toMatchObject({
      cancelled: before.cancelled,
      tasksCancelled: 0,
      tasksCompleted: 1,
      unknownCancelsIgnored: before.unknownCancelsIgnored! + 1,
    });
  });

  it('closing stdin cancels the still-running tasks: the work stops and the server exits 0', async () => {
    // One thread and no standby: one task runs, the other waits in the queue; both are cancelled.
    const w = new TaskWire(['--threads', '1', '--spare-threads', '0']);
    await w.initialize();
    await w.createTask('spin', { ms: 600_000 });
    await w.createTask('spin', { ms: 600_000 });
    await w.until(
      async () => (await w.stats()).running === 1 && (await w.stats()).queued === 1,
      10_000,
      'one task running, one queued',
    );
    const t0 = Date.now();
    expect(await w.close()).toBe(0);
    expect(Date.now() - t0).toBeLessThan(5_000);
    // The executor's shutdown would stop the work anyway; the count is the connection's own close cancelling its tasks.
    expect(w.stderr).toMatch(/\] shutting down \(stdin closed\): cancelled 0 calls in flight and 2 working tasks\n/);
    expect(w.stderr).not.toMatch(/session closed: cancelled/); // one line for it, not two
    expect(w.violations).toEqual([]);
  });
});
