/**
 * The child-cell ledger on its own (src/state/child-cells.ts): each job's row of pid cells beside its state word,
 * its three cell values, and the one rule that makes a stop and a spawn meet: the worker writes the pid and then
 * reads the state word; the main thread moves the state word and then reads the row. The processes themselves are
 * covered by test/child-processes.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { CHILDREN_PER_JOB, ChildCells, RESERVED } from '../../dist/src/state/child-cells.js';

describe('child cells', () => {
  it('reserve → fill → clear: a row lists its live pids only, and counts each child started', () => {
    const cells = new ChildCells(4);
    const a = cells.reserve(2);
    const b = cells.reserve(2);
    expect(a).not.toBe(b);
    // A reserved cell is never a group to signal: the spawn is under way.
    expect(cells.cells[a]).toBe(RESERVED);
    expect(cells.groups(2)).toEqual([]);
    cells.fill(a, 1234);
    cells.fill(b, 5678);
    expect(cells.groups(2)).toEqual([1234, 5678]);
    expect(cells.groups(1)).toEqual([]);
    expect(cells.started).toBe(2);
    cells.clear(a, 1234);
    expect(cells.groups(2)).toEqual([5678]);
    expect(cells.all()).toEqual([5678]);
  });

  it('a spawn that failed (no pid) empties its cell and counts nothing', () => {
    const cells = new ChildCells(1);
    const c = cells.reserve(0);
    cells.fill(c, undefined);
    expect(cells.groups(0)).toEqual([]);
    expect(cells.started).toBe(0);
    expect(cells.reserve(0)).toBe(c); // free again
  });

  it('a row holds CHILDREN_PER_JOB children at once; one more is refused (-1), other rows are not touched', () => {
    const cells = new ChildCells(2);
    for (let i = 0; i < CHILDREN_PER_JOB; i++) cells.fill(cells.reserve(0), 100 + i);
    expect(cells.reserve(0)).toBe(-1);
    expect(cells.reserve(1)).toBeGreaterThanOrEqual(0);
  });

  it('takeAll empties the row for the next job on the slot; a late clear by the worker then changes nothing', () => {
    const cells = new ChildCells(2);
    const c = cells.reserve(1);
    cells.fill(c, 4321);
    expect(cells.takeAll(1)).toEqual([4321]);
    expect(cells.groups(1)).toEqual([]);
    // The next job on the slot gets the cell, with a child of its own.
    const next = cells.reserve(1);
    cells.fill(next, 9999);
    cells.clear(c, 4321); // the old child's exit, seen late: a CAS on the old pid, so the new one stays
    expect(cells.groups(1)).toEqual([9999]);
  });

  it('one buffer, two views (main and worker): what one writes the other reads, and the counters are shared', () => {
    const main = new ChildCells(3);
    const worker = new ChildCells(3, main.buffer);
    worker.fill(worker.reserve(0), 777);
    worker.countWorkerKill();
    worker.countStarted();
    expect(main.groups(0)).toEqual([777]);
    expect(main.started).toBe(2);
    expect(main.killedByWorkers).toBe(1);
  });

  it('a stop and a spawn that race: whichever order, one side sees the other', () => {
    // Worker: fill(pid) then read the state word. Main: move the state word, then read the row. Sequentially
    // consistent atomics leave four interleavings; in each, the main thread sees the pid or the worker sees the stop.
    const orders = [
      ['fill', 'stop', 'readRow', 'readState'],
      ['fill', 'readState', 'stop', 'readRow'],
      ['stop', 'fill', 'readRow', 'readState'],
      ['stop', 'readRow', 'fill', 'readState'],
      ['fill', 'stop', 'readState', 'readRow'],
      ['stop', 'fill', 'readState', 'readRow'],
    ];
    for (const order of orders) {
      const cells = new ChildCells(1);
      const state = new Int32Array(new SharedArrayBuffer(4));
      const cell = cells.reserve(0);
      let mainSaw = false;
      let workerSaw = false;
      for (const step of order) {
        if (step === 'fill') cells.fill(cell, 4242);
        else if (step === 'stop') Atomics.store(state, 0, 1);
        else if (step === 'readRow') mainSaw = cells.groups(0).includes(4242);
        else workerSaw = Atomics.load(state, 0) === 1;
      }
      expect(mainSaw || workerSaw, order.join(' → ')).toBe(true);
    }
  });

  it("a reserved cell whose worker died is taken back by the main thread: one row's, or every row's", () => {
    const cells = new ChildCells(3);
    const a = cells.reserve(0);
    const b = cells.reserve(1);
    const c = cells.reserve(1);
    cells.fill(c, 4321);
    expect(cells.reserved()).toEqual([a, b]);
    expect(cells.takeReserved(1)).toEqual([b]); // the filled one is a group, not a reservation
    expect(cells.takeReserved(1)).toEqual([]); // once
    expect(cells.groups(1)).toEqual([4321]);
    expect(cells.takeReserved()).toEqual([a]);
    expect(cells.reserved()).toEqual([]);
    expect(cells.reserve(0)).toBe(a); // the cell is free again
  });
});
