/**
 * A child whose worker thread was terminated between the spawn and the write of its pid (the cell stays RESERVED):
 * the main thread finds it by the environment entry the guard gave it (CELL_ENV), ends it and frees the cell, when
 * the call settles and when the executor closes. The window is too narrow to hit on purpose through a server, so the
 * test plays the worker's part on ChildGroups itself, with real processes; test/child-processes.test.ts drives the
 * server (where this race first failed: a child that outlived `serve`'s exit on SIGTERM).
 */
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { ChildGroups } from '../dist/src/executor/children.js';
import { CELL_ENV } from '../dist/src/state/child-cells.js';
import { killMarked, marked, newMarker } from './child-procs.js';
import { until } from './helpers.js';

/** A liveness bound (a busy machine): a group sent SIGTERM, then SIGKILL after 100 ms, is gone long before it. */
const GONE_WITHIN_MS = 20_000;
const markers: string[] = [];
afterEach(() => {
  for (const m of markers.splice(0)) killMarked(m);
});

/** A detached shell that ignores SIGTERM, as the guard starts a stage's child, marked for `cell` (or not at all). */
function child(cell: number | undefined): string {
  const m = newMarker('unwritten');
  markers.push(m);
  const env = { ...process.env, ...(cell !== undefined && { [CELL_ENV]: `${process.pid}.${cell}` }) };
  const c = spawn('sh', ['-c', `trap "" TERM; while :; do sleep 0.05; done # ${m}`], {
    detached: true,
    stdio: 'ignore',
    env,
  });
  c.unref();
  return m;
}

describe('children whose pid never reached their cell', () => {
  it("are ended when their call settles with its worker gone; another cell's child and an unmarked one are not", async () => {
    const groups = new ChildGroups(2, 100);
    try {
      const mine = groups.cells.reserve(1);
      const other = groups.cells.reserve(0);
      const ours = child(mine);
      const theirs = child(other);
      const unmarked = child(undefined);
      await until(() => [ours, theirs, unmarked].every((m) => marked(m).length > 0), GONE_WITHIN_MS, 'the shells up');
      groups.release(1, true);
      await until(() => marked(ours).length === 0, GONE_WITHIN_MS, 'the unwritten child ended');
      expect(marked(theirs).length).toBeGreaterThan(0);
      expect(marked(unmarked).length).toBeGreaterThan(0);
      expect(groups.cells.reserved()).toEqual([other]); // the settled call's cell is free again
      expect(groups.counts()).toMatchObject({ childrenKilled: 1 });
      // The executor closes (every worker gone): the other cell's child is ended too; the unmarked one is not ours.
      await groups.close();
      await until(() => marked(theirs).length === 0, GONE_WITHIN_MS, "the other cell's child ended at close");
      expect(groups.cells.reserved()).toEqual([]);
      expect(marked(unmarked).length).toBeGreaterThan(0);
    } finally {
      await groups.close();
    }
  }, 60_000);

  it('a call that settles with its worker alive leaves a reservation to its spawn', async () => {
    const groups = new ChildGroups(1, 100);
    try {
      const cell = groups.cells.reserve(0);
      const m = child(cell);
      await until(() => marked(m).length > 0, GONE_WITHIN_MS, 'the shell up');
      groups.release(0, false);
      expect(groups.cells.reserved()).toEqual([cell]);
      expect(marked(m).length).toBeGreaterThan(0);
    } finally {
      await groups.close();
    }
  }, 60_000);
});
