/**
 * The one stress test of the unit layer: real threads on one slab. Two worker_threads claim the response of every
 * job while the main thread cancels the same jobs, with no ordering between them; whatever the interleaving, each
 * job has exactly one winner, and the word ends in the winner's state.
 */
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { JobState, packSlot, StateSlab, type SlotRef } from '../../dist/src/state/job-state.js';

const JOB_STATE = new URL('../../dist/src/state/job-state.js', import.meta.url).href;
const JOBS = 4000;

// Each worker claims every slot of its half, as fast as it can, once the main thread says go (one Atomics word).
const WORKER = `
const { parentPort, workerData, threadId } = require('node:worker_threads');
import(workerData.module).then(({ startSlot, claimResponse }) => {
  const words = new Int32Array(workerData.buffer);
  const go = new Int32Array(workerData.go);
  Atomics.wait(go, 0, 0);
  const won = [];
  for (const packed of workerData.slots) {
    const slot = startSlot({}, words, packed, threadId);
    if (claimResponse(slot, false)) won.push(packed);
  }
  parentPort.postMessage(won);
});
`;

describe('the job state word under real threads', () => {
  it('every job has exactly one winner when workers claim while the main thread cancels', async () => {
    const slab = new StateSlab(JOBS);
    const refs: SlotRef[] = [];
    for (let i = 0; i < JOBS; i++) {
      const ref = slab.allocate();
      slab.transition(ref, JobState.queued, JobState.running);
      refs.push(ref);
    }
    const go = new SharedArrayBuffer(4);
    const halves = [refs.filter((_, i) => i % 2 === 0), refs.filter((_, i) => i % 2 === 1)];
    const workers = halves.map(
      (half) =>
        new Worker(WORKER, {
          eval: true,
          workerData: { module: JOB_STATE, buffer: slab.buffer, go, slots: half.map((r) => packSlot(r, JOBS)) },
        }),
    );
    const claimed = workers.map(
      (w) => new Promise<number[]>((resolve, reject) => w.once('message', resolve).once('error', reject)),
    );
    // Let both workers reach their wait, then release them and cancel from the other end of the list.
    await new Promise((r) => setTimeout(r, 50));
    Atomics.store(new Int32Array(go), 0, 1);
    Atomics.notify(new Int32Array(go), 0);
    const cancelled = new Set<number>();
    for (let i = JOBS - 1; i >= 0; i--) if (slab.tryCancel(refs[i]!) === 'running') cancelled.add(i);
    const won = new Set((await Promise.all(claimed)).flat());
    await Promise.all(workers.map((w) => w.terminate()));

    for (let i = 0; i < JOBS; i++) {
      const claimedHere = won.has(packSlot(refs[i]!, JOBS));
      expect(claimedHere !== cancelled.has(i)).toBe(true);
      expect(slab.read(refs[i]!)).toBe(claimedHere ? 'responding' : 'cancelled');
    }
    expect(won.size + cancelled.size).toBe(JOBS);
  });
});
