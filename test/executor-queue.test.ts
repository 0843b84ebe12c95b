/**
 * Shutdown and the admission queue: close settles everything as cancelled, a job cancelled while queued never
 * runs, a full queue fails at once, sessions take turns.
 * Run: npx tsc -p . && npx vitest run test/executor-queue.test.ts
 */
import { describe, expect, it } from 'vitest';
import { setTimeout as delay } from 'node:timers/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Executor, type Job } from '../dist/src/index.js';
import {
  closeExecutorsAfterEach,
  make,
  within,
  submitRunning,
  cancelledRunning,
  cancelledQueued,
  scratch,
  FIXTURES,
} from './executor-helpers.js';

closeExecutorsAfterEach();

describe('close', () => {
  it('settles every outcome as cancelled (queued and running) and returns promptly', async () => {
    const ex = await Executor.create({ threads: 1, toolModules: [FIXTURES], graceMs: 5_000 });
    let outboundStops = 0;
    try {
      const { job: running } = await submitRunning(ex, 's', 'r', 'spin', { ms: 30_000 });
      const queued = [
        ex.submit('s', 'q1', { tool: 'quick', args: {} }),
        ex.submit('t', 'q2', { tool: 'quick', args: {} }),
      ];
      ex.registry.add({
        direction: 'outbound',
        session: 's',
        id: 'out',
        state: 'pending',
        stop: () => (outboundStops++, true),
      });
      const t0 = performance.now();
      await within(ex.close(), 10_000, 'close');
      expect(performance.now() - t0).toBeLessThan(3_000);
      expect(await within(running.outcome, 1_000, 'running job after close')).toEqual(cancelledRunning);
      for (const q of queued) expect(await within(q.outcome, 1_000, 'queued job after close')).toEqual(cancelledQueued);
      expect(outboundStops).toBe(1);
      expect(ex.stats().cancelled).toBe(3);
      expect(() => ex.reserve('s', 'late')).toThrow(/closed/);
    } finally {
      await ex.close();
    }
  }, 30_000);
});

describe('close with a stage that ignores cancellation', () => {
  it('does not hang: the stuck worker is destroyed and its outcome settles', async () => {
    const ex = await Executor.create({ threads: 1, toolModules: [FIXTURES], graceMs: 100 });
    const stuck = ex.submit('s', 'tight', { tool: 'tight', args: { ms: 60_000 } });
    await delay(200);
    ex.tryCancel('s', 'tight');
    await delay(300); // past the grace period: the hard stop has removed its worker
    const t0 = performance.now();
    await within(ex.close(), 10_000, 'close after a hard stop');
    expect(performance.now() - t0).toBeLessThan(3_000);
    expect((await within(stuck.outcome, 1_000, 'stuck job')).kind).toBe('cancelled');
  }, 30_000);
});

// ---- queueing ------------------------------------------------------------

describe('queue', () => {
  it('a job cancelled while queued never runs', async () => {
    const ex = await make({ threads: 1, graceMs: 5000 });
    const file = join(scratch, 'marks.txt');
    const { job: blocker } = await submitRunning(ex, 's', 'blocker', 'spin', { ms: 30_000 });
    const victim = ex.submit('s', 'victim', { tool: 'mark', args: { file, token: 'victim' } });
    const control = ex.submit('s', 'control', { tool: 'mark', args: { file, token: 'control' } });
    expect(victim.state).toBe('queued');
    expect(ex.stats().queued).toBe(2);

    expect(ex.tryCancel('s', 'victim')).toBe('cancelled-queued');
    // Settled at once: it never needed a worker.
    expect(
      await Promise.race([victim.outcome, new Promise((resolve) => setImmediate(() => resolve('pending')))]),
    ).toEqual(cancelledQueued);
    expect(ex.stats().queued).toBe(1);
    expect(ex.registry.get('inbound', 's', 'victim')).toBeUndefined();

    expect(ex.tryCancel('s', 'blocker')).toBe('cancelled-running');
    expect(await within(blocker.outcome, 10_000, 'blocker')).toEqual(cancelledRunning);
    expect((await within(control.outcome, 10_000, 'control mark')).kind).toBe('completed');
    // The control job proves the tool leaves evidence; the victim left none.
    expect(readFileSync(file, 'utf8')).toBe('control\n');
    expect(ex.stats().queued).toBe(0);
    expect(ex.stats().inFlight).toBe(0);
  }, 30_000);

  it('a full queue fails the next call at once with queue_full', async () => {
    const ex = await make({ threads: 1, queueLimit: 2, graceMs: 5000 });
    const { job: blocker } = await submitRunning(ex, 's', 'blocker', 'spin', { ms: 30_000 });
    const waiting = [
      ex.submit('s', 'w1', { tool: 'quick', args: { tag: 'w1' } }),
      ex.submit('s', 'w2', { tool: 'quick', args: { tag: 'w2' } }),
    ];
    expect(ex.stats().queued).toBe(2);

    const rejected = ex.submit('s', 'w3', { tool: 'quick', args: { tag: 'w3' } });
    const outcome = await Promise.race([
      rejected.outcome,
      new Promise((resolve) => setImmediate(() => resolve('pending'))),
    ]);
    // Decided before the next turn of the event loop: no worker, no wait.
    expect(outcome).toMatchObject({ kind: 'failed', code: 'queue_full' });
    expect(ex.registry.get('inbound', 's', 'w3')).toBeUndefined();
    // Another session is refused too: the limit is global.
    expect((await ex.submit('t', 'w4', { tool: 'quick', args: {} }).outcome).kind).toBe('failed');
    expect(ex.stats().failed).toBe(2);

    // Once room frees up, calls are admitted again.
    expect(ex.tryCancel('s', 'w1')).toBe('cancelled-queued');
    const admitted = ex.submit('s', 'w5', { tool: 'quick', args: { tag: 'w5' } });
    expect(admitted.state).toBe('queued');
    expect(ex.tryCancel('s', 'blocker')).toBe('cancelled-running');
    await within(blocker.outcome, 10_000, 'blocker');
    for (const j of [waiting[1]!, admitted])
      expect((await within(j.outcome, 10_000, 'queued quick')).kind).toBe('completed');
    expect(ex.stats().inFlight).toBe(0);
  }, 30_000);

  it('a call submitted right after the previous one settled is not refused: the freed thread counts as free', async () => {
    const ex = await make({ threads: 1, queueLimit: 1 });
    for (let i = 0; i < 5; i++) {
      const outcome = await within(
        ex.submit('s', `seq${i}`, { tool: 'quick', args: {} }).outcome,
        10_000,
        'sequential quick job',
      );
      expect(outcome.kind).toBe('completed');
    }
  });

  it('is fair between sessions: B does not wait behind all of A', async () => {
    const ex = await make({ threads: 1 });
    const order: string[] = [];
    const jobs: Job[] = [];
    for (let i = 0; i < 20; i++) {
      const j = ex.submit('A', i, { tool: 'spin', args: { ms: 5 } });
      void j.outcome.then(() => order.push(`A${i}`));
      jobs.push(j);
    }
    for (let i = 0; i < 2; i++) {
      const j = ex.submit('B', i, { tool: 'spin', args: { ms: 5 } });
      void j.outcome.then(() => order.push(`B${i}`));
      jobs.push(j);
    }
    const outcomes = await within(Promise.all(jobs.map((j) => j.outcome)), 20_000, 'fairness jobs');
    for (const o of outcomes) expect(o.kind).toBe('completed');
    expect(order).toHaveLength(22);
    // FIFO would put B at 20 and 21; turn-taking puts them within the first few.
    expect(order.indexOf('B0')).toBeLessThanOrEqual(3);
    expect(order.indexOf('B1')).toBeLessThanOrEqual(5);
    expect(order.indexOf('B0')).toBeLessThan(order.indexOf('B1'));
    // FIFO within a session.
    const aOrder = order.filter((s) => s.startsWith('A'));
    expect(aOrder).toEqual(Array.from({ length: 20 }, (_, i) => `A${i}`));
  }, 30_000);
});
