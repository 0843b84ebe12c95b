/**
 * The task state machine, src/state/task-state.ts: its table is the drawing
 * (every edge, and every other pair refused), terminal statuses are never
 * left, and the server's memory store and the client's task shape use that
 * one table, not copies of it.
 */
import { describe, expect, it } from 'vitest';
import { canMove, isTerminal, TASK_EDGES, TASK_STATUSES, type TaskStatus } from '../../dist/src/state/task-state.js';
import { isTerminal as storeIsTerminal } from '../../dist/src/tasks/store.js';
import { isTerminal as clientIsTerminal } from '../../dist/src/client/task-shape.js';
import { MemoryTaskStore } from '../../dist/src/tasks/memory-store.js';

/** The drawing's edges, written out independently of the module. */
const DRAWN: ReadonlyArray<readonly [TaskStatus, TaskStatus]> = [
  ['working', 'input_required'],
  ['working', 'completed'],
  ['working', 'failed'],
  ['working', 'cancelled'],
  ['input_required', 'working'],
  ['input_required', 'completed'],
  ['input_required', 'failed'],
  ['input_required', 'cancelled'],
];
const TERMINAL = ['completed', 'failed', 'cancelled'] as const;
const ANSWER = { kind: 'error', code: -32603, message: 'x' } as const;

describe('the task state table', () => {
  it('has exactly the drawn edges; every other pair (and staying) is refused', () => {
    const table = TASK_STATUSES.flatMap((from) => TASK_EDGES[from].map((to) => [from, to] as const));
    expect([...table].sort()).toEqual([...DRAWN].sort());
    for (const from of TASK_STATUSES)
      for (const to of TASK_STATUSES)
        expect(canMove(from, to), `${from} → ${to}`).toBe(DRAWN.some(([f, t]) => f === from && t === to));
  });

  it('the terminal statuses are exactly those with no edge out, and isTerminal says so, once for server and client', () => {
    expect(TASK_STATUSES.filter((s) => TASK_EDGES[s].length === 0)).toEqual([...TERMINAL]);
    for (const s of TASK_STATUSES) expect(isTerminal(s)).toBe((TERMINAL as readonly string[]).includes(s));
    expect(isTerminal('anything else a server might send')).toBe(false);
    expect(storeIsTerminal).toBe(isTerminal);
    expect(clientIsTerminal).toBe(isTerminal);
  });

  it('the memory store moves along the table only: into and out of input_required, then settled once', async () => {
    const store = new MemoryTaskStore({});
    try {
      const task = await store.create('o', undefined, undefined, 'tool', undefined);
      expect(task.status).toBe('working');
      expect((await store.mark('o', task.taskId, 'input_required', 'asking'))?.status).toBe('input_required');
      expect((await store.mark('o', task.taskId, 'input_required', 'asking again'))?.statusMessage).toBe(
        'asking again',
      );
      expect((await store.mark('o', task.taskId, 'working'))?.status).toBe('working');
      expect((await store.settle('o', task.taskId, 'cancelled', ANSWER))?.status).toBe('cancelled');
      // Terminal: no edge out, so neither a second settle nor a mark moves it.
      expect(await store.settle('o', task.taskId, 'completed', ANSWER)).toBeUndefined();
      expect(await store.mark('o', task.taskId, 'working')).toBeUndefined();
      expect((await store.get('o', task.taskId))?.task.status).toBe('cancelled');
    } finally {
      await store.close();
    }
  });
});
