/**
 * A running job's two timers on their own, on a fake clock: the deadline, then after a stop the grace period that
 * ends in a hard stop, re-armed while the job is not on a thread yet.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Escalation } from '../../dist/src/executor/escalation.js';

function target(onThread = () => true) {
  const seen: string[] = [];
  return {
    seen,
    target: { onDeadline: () => void seen.push('deadline'), onThread, hardStop: () => void seen.push('hardStop') },
  };
}

describe('Escalation', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('fires the deadline at its time, and none for undefined or 0', () => {
    for (const ms of [undefined, 0, -5]) {
      const { seen, target: t } = target();
      new Escalation(t).armDeadline(ms);
      vi.advanceTimersByTime(1e9);
      expect(seen).toEqual([]);
    }
    const { seen, target: t } = target();
    new Escalation(t).armDeadline(100);
    vi.advanceTimersByTime(99);
    expect(seen).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(seen).toEqual(['deadline']);
  });

  it('a stop clears the deadline; the grace period ends in one hard stop', () => {
    const { seen, target: t } = target();
    const e = new Escalation(t);
    e.armDeadline(100);
    e.armGrace(50);
    vi.advanceTimersByTime(49);
    expect(e.hardStopped).toBe(false);
    vi.advanceTimersByTime(1000);
    expect(seen).toEqual(['hardStop']);
    expect(e.hardStopped).toBe(true);
  });

  it('a job not on a thread yet gets the grace period again, until it is', () => {
    let onThread = false;
    const { seen, target: t } = target(() => onThread);
    const e = new Escalation(t);
    e.armGrace(10);
    vi.advanceTimersByTime(35);
    expect(seen).toEqual([]);
    onThread = true;
    vi.advanceTimersByTime(5);
    expect(seen).toEqual(['hardStop']);
  });

  it('clear stops both timers', () => {
    const { seen, target: t } = target();
    const e = new Escalation(t);
    e.armDeadline(10);
    e.clear();
    const f = new Escalation(t);
    f.armGrace(10);
    f.clear();
    vi.advanceTimersByTime(1000);
    expect(seen).toEqual([]);
  });
});
