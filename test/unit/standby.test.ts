/**
 * The standby policy on its own, with a fake clock: when a stopped job's
 * admission slot passes to the standby thread, and how many can be lent.
 * The thread-level behaviour is covered by the executor's integration tests.
 */
import { describe, expect, it } from 'vitest';
import { Standby, type StandbyClock, type StandbySettings } from '../../dist/src/executor/standby.js';

class FakeClock implements StandbyClock {
  now = 0;
  private timers: { at: number; fn: () => void; handle: number }[] = [];
  private next = 1;
  setTimeout(fn: () => void, ms: number): number {
    const handle = this.next++;
    this.timers.push({ at: this.now + ms, fn, handle });
    return handle;
  }
  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((t) => t.handle !== handle);
  }
  advance(ms: number): void {
    this.now += ms;
    const due = this.timers.filter((t) => t.at <= this.now).sort((a, b) => a.at - b.at);
    this.timers = this.timers.filter((t) => t.at > this.now);
    for (const t of due) t.fn();
  }
  get pending(): number {
    return this.timers.length;
  }
}

function policy(settings: Partial<StandbySettings> = {}) {
  const admission = { concurrency: -1 };
  const clock = new FakeClock();
  const standby = new Standby(
    { threads: 2, spareThreads: 1, cores: 4, handoffDelayMs: 5, ...settings },
    admission,
    clock,
  );
  return { standby, admission, clock };
}

describe('standby policy', () => {
  it('sizes the pool, the warm-up and the slab from threads + spareThreads, and admits `threads` at first', () => {
    const { standby, admission } = policy({ threads: 3, spareThreads: 2 });
    expect(standby.poolThreads).toBe(5);
    expect(admission.concurrency).toBe(3);
    expect(standby.slabCapacity(256)).toBe(256 + 2 * 5 + 1);
    expect(standby.freeThreads(1)).toBe(2);
  });

  it('with a free core, lends the slot at once; the loan ends when the worker returns, once only', () => {
    const { standby, admission, clock } = policy({ cores: 4 });
    const loan = standby.stopped(3); // 3 jobs on threads, counting the stopped one: a core is free
    expect(admission.concurrency).toBe(3);
    expect(clock.pending).toBe(0);
    loan.end();
    expect(admission.concurrency).toBe(2);
    loan.end();
    expect(admission.concurrency).toBe(2);
  });

  it('with every core busy, lends only after handoffDelayMs, and not at all if the job stops first', () => {
    const { standby, admission, clock } = policy({ cores: 2, handoffDelayMs: 5 });
    const slow = standby.stopped(2);
    clock.advance(4);
    expect(admission.concurrency).toBe(2);
    clock.advance(1);
    expect(admission.concurrency).toBe(3);
    slow.end();
    expect(admission.concurrency).toBe(2);

    const quick = standby.stopped(2);
    clock.advance(2);
    quick.end(); // reached its checkpoint before the delay: its slot never passed
    expect(clock.pending).toBe(0);
    clock.advance(10);
    expect(admission.concurrency).toBe(2);
  });

  it('handoffDelayMs 0 lends at once even with every core busy', () => {
    const { standby, admission } = policy({ cores: 1, handoffDelayMs: 0 });
    standby.stopped(5);
    expect(admission.concurrency).toBe(3);
  });

  it('lends at most spareThreads slots at a time, however many jobs are stopped', () => {
    const { standby, admission } = policy({ spareThreads: 1, cores: 16 });
    const loans = [standby.stopped(2), standby.stopped(3), standby.stopped(4)];
    expect(admission.concurrency).toBe(3);
    loans[0]!.end();
    loans[1]!.end();
    expect(admission.concurrency).toBe(3); // one still lent
    loans[2]!.end();
    expect(admission.concurrency).toBe(2);
  });

  it('spareThreads 0 never lends', () => {
    const { standby, admission } = policy({ spareThreads: 0, cores: 16 });
    const loan = standby.stopped(1);
    expect(admission.concurrency).toBe(2);
    loan.end();
    expect(admission.concurrency).toBe(2);
    expect(standby.poolThreads).toBe(2);
  });

  it('stops waiting jobs before running ones', () => {
    const { standby } = policy();
    const order = standby.stopOrder(['run1', 'wait1', 'run2', 'wait2'], (e) => e.startsWith('wait'));
    expect(order).toEqual(['wait1', 'wait2', 'run1', 'run2']);
  });
});
