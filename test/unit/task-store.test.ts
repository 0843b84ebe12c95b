/**
 * The in-memory task store on its own: working → terminal exactly once, the limits, the byte bound on finished
 * tasks (oldest finished first), ttl, owners, pages, and waiting for the terminal status.
 */
import { describe, expect, it } from 'vitest';
import { MemoryTaskStore } from '../../dist/src/tasks/memory-store.js';
import { TaskLimitError, InvalidCursorError, isTerminal, type TaskAnswer } from '../../dist/src/tasks/store.js';

const ok = (text = 'x'): TaskAnswer => ({ kind: 'result', result: { content: [{ type: 'text', text }] } });

describe('MemoryTaskStore', () => {
  it('settles a working task once: the first terminal status stays', async () => {
    const s = new MemoryTaskStore();
    const t = await s.create('a', undefined);
    expect(t.status).toBe('working');
    expect(await s.mark('a', t.taskId, 'input_required', 'waiting')).toMatchObject({
      status: 'input_required',
      statusMessage: 'waiting',
    });
    expect(await s.mark('a', t.taskId, 'working')).not.toHaveProperty('statusMessage');
    expect(await s.settle('a', t.taskId, 'completed', ok())).toMatchObject({ status: 'completed' });
    expect(await s.settle('a', t.taskId, 'cancelled', { kind: 'error', code: 1, message: 'late' })).toBeUndefined();
    expect(await s.mark('a', t.taskId, 'working')).toBeUndefined();
    expect(await s.get('a', t.taskId)).toEqual({
      task: expect.objectContaining({ status: 'completed' }),
      answer: ok(),
    });
    expect(['completed', 'failed', 'cancelled'].every((x) => isTerminal(x as never))).toBe(true);
    expect(isTerminal('working') || isTerminal('input_required')).toBe(false);
  });

  it('another owner’s task reads as absent, and cannot be settled or marked', async () => {
    const s = new MemoryTaskStore();
    const t = await s.create('a', undefined);
    expect(await s.get('b', t.taskId)).toBeUndefined();
    expect(await s.settle('b', t.taskId, 'completed', ok())).toBeUndefined();
    expect(await s.mark('b', t.taskId, 'input_required')).toBeUndefined();
    expect((await s.get('a', t.taskId))!.task.status).toBe('working');
  });

  it('counts working tasks per owner and in all, from their states: a terminal one frees its place', async () => {
    const s = new MemoryTaskStore({ maxWorkingTasksPerSession: 2, maxWorkingTasks: 3 });
    const a1 = await s.create('a', undefined);
    await s.create('a', undefined);
    await expect(s.create('a', undefined)).rejects.toBeInstanceOf(TaskLimitError);
    await s.create('b', undefined);
    await expect(s.create('c', undefined)).rejects.toThrow(/3 working tasks in all sessions/);
    await s.settle('a', a1.taskId, 'failed', { kind: 'error', code: -32603, message: 'x' });
    await s.create('a', undefined); // a1 finished: a place is free, per session and in all
    expect(await s.count('a')).toBe(3); // finished tasks are still held
  });

  it('sessions counted as their caller share its per-caller limit; a removed task frees its place where it counted', async () => {
    const s = new MemoryTaskStore({ maxWorkingTasksPerSession: 2, maxWorkingTasks: 10 });
    s.countAs('session-1', 'caller');
    s.countAs('session-2', 'caller');
    const first = await s.create('caller', undefined);
    const second = await s.create('session-1', undefined);
    await expect(s.create('session-2', undefined)).rejects.toThrow(/^per-caller task limit reached/);
    expect(s.workingOf('caller')).toBe(2);
    // The session closes: its task leaves the caller's count, and the session no longer counts as the caller.
    s.uncount('session-1');
    await s.dropOwner('session-1');
    expect(s.workingOf('caller')).toBe(1);
    expect((await s.create('session-2', undefined)).status).toBe('working');
    await s.settle('caller', first.taskId, 'completed', ok());
    expect(s.workingOf('caller')).toBe(1);
    expect(await s.get('session-1', second.taskId)).toBeUndefined();
  });

  it('caps the ttl and expires tasks at it', async () => {
    const s = new MemoryTaskStore({ maxTtlMs: 1000, defaultTtlMs: 5000 });
    const t = await s.create('a', 60_000);
    expect(t.ttl).toBe(1000);
    expect((await s.create('a', undefined)).ttl).toBe(1000);
    const now = Date.parse(t.createdAt);
    expect(await s.sweep(now + 999)).toEqual([]);
    expect((await s.sweep(now + 5000)).map((x) => x.taskId)).toContain(t.taskId);
    expect(await s.get('a', t.taskId)).toBeUndefined();
  });

  it('bounds finished tasks by bytes, oldest finished first, and tells the listener', async () => {
    const one = Buffer.byteLength(JSON.stringify(ok('y'.repeat(1000))));
    const s = new MemoryTaskStore({ maxFinishedTaskBytes: 3 * (one + 400) });
    const evicted: string[] = [];
    s.onEvicted((tasks) => evicted.push(...tasks.map((t) => t.taskId)));
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await s.create('a', undefined)).taskId);
    // Finished in the order 2, 0, 3, 1: the fourth to finish removes the first to finish (2).
    for (const i of [2, 0, 3, 1]) await s.settle('a', ids[i]!, 'completed', ok('y'.repeat(1000)));
    expect(evicted).toEqual([ids[2]]);
    expect(await s.get('a', ids[2]!)).toBeUndefined();
    // A result larger than the whole bound is not kept, and removes nothing else.
    const big = await s.create('a', undefined);
    await s.settle('a', big.taskId, 'completed', ok('z'.repeat(10 * one)));
    expect(evicted).toEqual([ids[2], big.taskId]);
    expect(await s.count('a')).toBe(3);
  });

  it('pages an owner’s tasks in creation order; a bad cursor is refused', async () => {
    const s = new MemoryTaskStore({ pageSize: 2 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await s.create('a', undefined)).taskId);
    await s.create('b', undefined);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await s.list('a', cursor);
      seen.push(...page.tasks.map((t) => t.taskId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(ids);
    await expect(s.list('a', 'nonsense')).rejects.toBeInstanceOf(InvalidCursorError);
  });

  it('waitForTerminal: at once when terminal, on the settle, undefined when removed or aborted', async () => {
    const s = new MemoryTaskStore();
    const t = await s.create('a', undefined);
    const waiting = s.waitForTerminal('a', t.taskId);
    const ac = new AbortController();
    const aborted = s.waitForTerminal('a', t.taskId, ac.signal);
    ac.abort();
    expect(await aborted).toBeUndefined();
    await s.settle('a', t.taskId, 'completed', ok());
    expect((await waiting)!.answer).toEqual(ok());
    expect((await s.waitForTerminal('a', t.taskId))!.task.status).toBe('completed');
    const u = await s.create('a', undefined);
    const gone = s.waitForTerminal('a', u.taskId);
    expect((await s.dropOwner('a')).map((x) => x.taskId).sort()).toEqual([t.taskId, u.taskId].sort());
    expect(await gone).toBeUndefined();
  });
});
