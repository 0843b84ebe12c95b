/**
 * The local job's state word, in process: every transition of the diagram in src/state/job-state.ts, the
 * compare-exchange losing to a racing transition (interleaved by hand: each side read its expected word before the
 * other moved), generation reuse, and the counts the slab derives from its states.
 */
import { describe, expect, it } from 'vitest';
import {
  claimResponse,
  isJobEdge,
  JOB_EDGES,
  JobState,
  packSlot,
  StateSlab,
  startSlot,
  stateName,
  stateOf,
  stillRunning,
  word,
  leftRunning,
  type JobStateCode,
  type JobStateName,
  type SlotRef,
  type WorkerSlot,
} from '../../dist/src/state/job-state.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
const CODES = Object.values(JobState) as JobStateCode[];

/** The worker's view of a slot the main thread allocated and started. */
function workerSide(slab: StateSlab, ref: SlotRef, threadId = 7): WorkerSlot {
  const words = new Int32Array(slab.buffer);
  return startSlot({} as Mutable<WorkerSlot>, words, packSlot(ref, slab.capacity), threadId);
}

/** The transitions the diagram allows, and nothing else. */
const ALLOWED: ReadonlyArray<readonly [JobStateName, JobStateName]> = [
  ['queued', 'running'],
  ['queued', 'cancelled'],
  ['running', 'responding'],
  ['running', 'cancelled'],
  ['running', 'timedOut'],
  ['responding', 'completed'],
  ['responding', 'failed'],
];

describe('the job state word', () => {
  it('packs a generation and a state, and names every state', () => {
    for (const code of CODES) {
      const w = word(12345, code);
      expect(stateOf(w)).toBe(code);
      expect(w >> 3).toBe(12345);
      expect(JobState[stateName(w)]).toBe(code);
    }
  });

  it('the table the module exports is the diagram: exactly these edges', () => {
    expect(JOB_EDGES.map((e) => [e.from, e.to])).toEqual(ALLOWED);
  });

  it('a transition succeeds exactly along an edge from its `from` state; every other pair is refused (every pair of states)', () => {
    for (const from of CODES) {
      for (const to of CODES) {
        const slab = new StateSlab(1);
        const ref = slab.allocate();
        const edge = ALLOWED.some(([f, t]) => JobState[f] === from && JobState[t] === to);
        // Drive the slot into `from` through the word itself (the slab only moves by compare-exchange).
        Atomics.store(new Int32Array(slab.buffer), ref.index, word(ref.generation, from));
        expect(isJobEdge(from, to)).toBe(edge);
        if (!edge) {
          // Not an edge of the table: refused, though the word is in `from`, and nothing changes.
          expect(slab.transition(ref, from, to), `${from} → ${to}`).toBe(false);
          expect(slab.read(ref)).toBe(stateName(word(0, from)));
          continue;
        }
        expect(slab.transition(ref, from, to)).toBe(true);
        expect(slab.read(ref)).toBe(stateName(word(0, to)));
        // From any other state the same transition loses and changes nothing.
        for (const other of CODES.filter((c) => c !== from)) {
          Atomics.store(new Int32Array(slab.buffer), ref.index, word(ref.generation, other));
          expect(slab.transition(ref, from, to)).toBe(false);
          expect(slab.read(ref)).toBe(stateName(word(0, other)));
        }
      }
    }
  });

  it('walks every path of the diagram', () => {
    const paths: JobStateName[][] = [
      ['queued', 'cancelled'],
      ['queued', 'running', 'cancelled'],
      ['queued', 'running', 'timedOut'],
      ['queued', 'running', 'responding', 'completed'],
      ['queued', 'running', 'responding', 'failed'],
    ];
    for (const path of paths) {
      const slab = new StateSlab(2);
      const ref = slab.allocate();
      expect(slab.read(ref)).toBe('queued');
      for (let i = 1; i < path.length; i++) {
        const [from, to] = [path[i - 1]!, path[i]!];
        expect(ALLOWED).toContainEqual([from, to]);
        expect(slab.transition(ref, JobState[from], JobState[to])).toBe(true);
        expect(slab.read(ref)).toBe(to);
      }
    }
  });

  it('tryCancel wins from queued and from running, and loses from every other state', () => {
    for (const code of CODES) {
      const slab = new StateSlab(1);
      const ref = slab.allocate();
      Atomics.store(new Int32Array(slab.buffer), ref.index, word(ref.generation, code));
      const name = stateName(word(0, code));
      const won = slab.tryCancel(ref);
      if (name === 'queued' || name === 'running') {
        expect(won).toBe(name);
        expect(slab.read(ref)).toBe('cancelled');
      } else {
        expect(won).toBeUndefined();
        expect(slab.read(ref)).toBe(name);
      }
    }
  });
});

describe('the race, interleaved by hand', () => {
  it('completion first: the worker claims the response, then the main thread’s cancel (expected `running`) loses', () => {
    const slab = new StateSlab(1);
    const ref = slab.allocate();
    expect(slab.transition(ref, JobState.queued, JobState.running)).toBe(true);
    const worker = workerSide(slab, ref);
    // Both sides read `running`; the worker's compare-exchange lands first.
    expect(claimResponse(worker)).toBe(true);
    expect(slab.transition(ref, JobState.running, JobState.cancelled)).toBe(false);
    expect(slab.tryCancel(ref)).toBeUndefined();
    expect(slab.read(ref)).toBe('responding');
    expect(stillRunning(worker)).toBe(false);
  });

  it('cancel first: the main thread wins running → cancelled, then the worker’s claim (its stale running word) loses', () => {
    const slab = new StateSlab(1);
    const ref = slab.allocate();
    slab.transition(ref, JobState.queued, JobState.running);
    const worker = workerSide(slab, ref);
    expect(stillRunning(worker)).toBe(true);
    expect(slab.tryCancel(ref)).toBe('running');
    expect(stillRunning(worker)).toBe(false);
    expect(claimResponse(worker)).toBe(false);
    expect(slab.read(ref)).toBe('cancelled');
  });

  it('the deadline and a cancel, both expecting running: whichever lands first wins, the other loses', () => {
    for (const first of ['timedOut', 'cancelled'] as const) {
      const slab = new StateSlab(1);
      const ref = slab.allocate();
      slab.transition(ref, JobState.queued, JobState.running);
      const second = first === 'timedOut' ? 'cancelled' : 'timedOut';
      expect(slab.transition(ref, JobState.running, JobState[first])).toBe(true);
      expect(slab.transition(ref, JobState.running, JobState[second])).toBe(false);
      expect(slab.read(ref)).toBe(first);
    }
  });

  it('a cancel that read `queued` loses once the job started, and its retry from `running` wins', () => {
    const slab = new StateSlab(1);
    const ref = slab.allocate();
    // The canceller read queued; the start landed between its read and its compare-exchange.
    expect(slab.transition(ref, JobState.queued, JobState.running)).toBe(true);
    expect(slab.transition(ref, JobState.queued, JobState.cancelled)).toBe(false);
    expect(slab.tryCancel(ref)).toBe('running');
  });

  it('a cancel of a queued job wins over the start: the start (expected `queued`) loses', () => {
    const slab = new StateSlab(1);
    const ref = slab.allocate();
    expect(slab.tryCancel(ref)).toBe('queued');
    expect(slab.transition(ref, JobState.queued, JobState.running)).toBe(false);
    expect(slab.read(ref)).toBe('cancelled');
  });

  it('a moved word wakes the worker’s waiter; a claim wakes its own', async () => {
    for (const stop of ['cancel', 'claim'] as const) {
      const slab = new StateSlab(1);
      const ref = slab.allocate();
      slab.transition(ref, JobState.queued, JobState.running);
      const worker = workerSide(slab, ref);
      let left = false;
      const waiting = leftRunning(worker).then(() => (left = true));
      await new Promise<void>((r) => setImmediate(r));
      expect(left).toBe(false);
      if (stop === 'cancel') slab.tryCancel(ref);
      else claimResponse(worker);
      await waiting;
      expect(left).toBe(true);
    }
  });
});

describe('generations', () => {
  it('a released slot comes back under a new generation; the old holder can no longer win or read it', () => {
    const slab = new StateSlab(1);
    const old = slab.allocate();
    slab.transition(old, JobState.queued, JobState.running);
    const staleWorker = workerSide(slab, old);
    slab.tryCancel(old);
    slab.release(old);
    expect(slab.read(old)).toBe('free');
    const reused = slab.allocate();
    expect(reused.index).toBe(old.index);
    expect(reused.generation).not.toBe(old.generation);
    slab.transition(reused, JobState.queued, JobState.running);
    // The stale generation loses every transition on the reused slot, on both sides.
    expect(slab.tryCancel(old)).toBeUndefined();
    expect(slab.transition(old, JobState.running, JobState.timedOut)).toBe(false);
    expect(claimResponse(staleWorker)).toBe(false);
    expect(stillRunning(staleWorker)).toBe(false);
    expect(slab.read(old)).toBe('free');
    expect(slab.read(reused)).toBe('running');
  });

  it('a second release of the same ref does nothing (the slot is not freed twice)', () => {
    const slab = new StateSlab(2);
    const a = slab.allocate();
    slab.release(a);
    const b = slab.allocate(); // the same index, reused
    slab.release(a);
    expect(slab.available).toBe(1);
    expect(slab.read(b)).toBe('queued');
  });

  it('generations wrap within 28 bits and the word stays a positive int32', () => {
    const slab = new StateSlab(1);
    let ref = slab.allocate();
    for (let i = 0; i < 5; i++) {
      slab.release(ref);
      ref = slab.allocate();
    }
    expect(ref.generation).toBe(11); // allocate and release each advance it: 1, then +2 per reuse
    const top = word((1 << 28) - 1, JobState.failed);
    expect(top).toBeGreaterThan(0);
    expect(stateOf(top)).toBe(JobState.failed);
  });

  it('packSlot and startSlot carry index, generation and the thread id to the worker', () => {
    const slab = new StateSlab(5);
    const refs = [slab.allocate(), slab.allocate(), slab.allocate()];
    slab.release(refs[1]!);
    const again = slab.allocate();
    for (const ref of [refs[0]!, again, refs[2]!]) {
      expect(slab.started(ref)).toBe(false);
      const w = workerSide(slab, ref, 40 + ref.index);
      expect(w.index).toBe(ref.index);
      expect(w.runningWord).toBe(word(ref.generation, JobState.running));
      expect(slab.started(ref)).toBe(true);
      expect(slab.threadOf(ref)).toBe(40 + ref.index);
    }
  });
});

describe('counts derived from states', () => {
  it('available counts the free slots; allocation past capacity throws', () => {
    const slab = new StateSlab(3);
    expect(slab.available).toBe(3);
    const refs = [slab.allocate(), slab.allocate(), slab.allocate()];
    expect(slab.available).toBe(0);
    expect(() => slab.allocate()).toThrow(/exhausted/);
    // A settled job still holds its slot until released: counts follow release, not the state.
    slab.tryCancel(refs[0]!);
    expect(slab.available).toBe(0);
    for (const r of refs) slab.release(r);
    expect(slab.available).toBe(3);
    // Every slot reads free under its old generation, and a fresh allocation reads queued.
    for (const r of refs) expect(slab.read(r)).toBe('free');
    expect(slab.read(slab.allocate())).toBe('queued');
  });

  it('the states of many jobs, read back, are exactly the transitions that won', () => {
    const slab = new StateSlab(64);
    const tally: Record<string, number> = {};
    for (let i = 0; i < 64; i++) {
      const ref = slab.allocate();
      if (i % 4 !== 0) slab.transition(ref, JobState.queued, JobState.running);
      if (i % 4 === 1) slab.tryCancel(ref);
      if (i % 4 === 2) claimResponse(workerSide(slab, ref));
      const s = slab.read(ref);
      tally[s] = (tally[s] ?? 0) + 1;
    }
    expect(tally).toEqual({ queued: 16, cancelled: 16, responding: 16, running: 16 });
  });
});
