/**
 * Stops that need more than a checkpoint: the hard stop after graceMs, deadlines, ctx.signal.
 * Run: npx tsc -p . && npx vitest run test/executor-stops.test.ts
 */
import { describe, expect, it } from 'vitest';
import { setTimeout as delay } from 'node:timers/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type JobOutcome } from '../dist/src/index.js';
import {
  closeExecutorsAfterEach,
  make,
  within,
  quick,
  warm,
  submitRunning,
  cancelledRunning,
  scratch,
} from './executor-helpers.js';

closeExecutorsAfterEach();

// Liveness bounds, at least 10x the figure expected (a hard kill after a 200 ms grace, a 150-200 ms deadline, an
// aborted timer in a few ms), so a busy machine cannot fail them. The lower bounds are not speeds: a timer never
// fires early, so a stop before the grace or the deadline would be a defect however loaded the machine is.
const HARD_KILL_LIVENESS_BOUND_MS = 5_000;
const DEADLINE_LIVENESS_BOUND_MS = 3_000;
const ABORTED_TIMER_LIVENESS_BOUND_MS = 2_000;

describe('hard stop, deadlines, ctx.signal', () => {
  it('a non-cooperative stage is hard-killed after graceMs, and the pool keeps serving', async () => {
    const ex = await make({ threads: 1, graceMs: 200 });
    const before = await quick(ex);
    const { job } = await submitRunning(ex, 's', 'tight', 'tight', { ms: 60_000, announce: true });
    const t0 = performance.now();
    expect(ex.tryCancel('s', 'tight')).toBe('cancelled-running');
    const outcome = await within(job.outcome, 10_000, 'hard-killed job');
    const took = performance.now() - t0;
    expect(outcome).toEqual({ kind: 'cancelled', from: 'running', hardKilled: true });
    expect(took).toBeGreaterThanOrEqual(190);
    expect(took).toBeLessThan(HARD_KILL_LIVENESS_BOUND_MS);
    expect(ex.stats().hardKilled).toBe(1);

    // A replacement thread serves the next job; nothing else changed.
    const after = await quick(ex);
    expect(after.threadId).not.toBe(before.threadId);
    const again = await quick(ex);
    expect(again.threadId).toBe(after.threadId);
    const stats = ex.stats();
    expect(stats.threads).toBe(ex.threads + ex.spareThreads);
    expect(stats.hardKilled).toBe(1);
    expect(stats.cancelled).toBe(1);
    expect(stats.inFlight).toBe(0);

    // Same for the built-in spin with cooperative: false (its one progress report says the uncheckable part began).
    const { job: second } = await submitRunning(ex, 's', 'spin-nc', 'spin', { ms: 60_000, cooperative: false });
    expect(ex.tryCancel('s', 'spin-nc')).toBe('cancelled-running');
    expect(await within(second.outcome, 10_000, 'second hard kill')).toMatchObject({
      kind: 'cancelled',
      hardKilled: true,
    });
    expect(ex.stats().hardKilled).toBe(2);
    await quick(ex);
  }, 90_000);

  it('survives many hard stops in a row, each worker replaced while others start up', async () => {
    const ex = await make({ threads: 2, graceMs: 20 });
    const rounds = 24;
    let killed = 0;
    for (let i = 0; i < rounds; i += 2) {
      const jobs = [0, 1].map((k) => ex.submit('hk', `hk${i + k}`, { tool: 'tight', args: { ms: 60_000 } }));
      // Sleep is the point: cancels land at varied moments of a start-up (queued, starting, running).
      await delay(5 + (i % 7));
      const verdicts = [0, 1].map((k) => ex.tryCancel('hk', `hk${i + k}`));
      for (const [k, j] of jobs.entries()) {
        const outcome = await within(j.outcome, 10_000, 'hard-stopped job');
        // Once seen under load: a 'failed' outcome here. The cancel's verdict and the whole outcome tell a job that
        // failed before the cancel (nothing accepted) from an accepted cancel that did not end cancelled (a defect).
        expect({ verdict: verdicts[k], outcome }).toMatchObject({ outcome: { kind: 'cancelled' } });
        // A job still waiting for a replacement thread is only dequeued: hardKilled counts real terminations.
        if (outcome.kind === 'cancelled' && outcome.hardKilled) killed++;
      }
    }
    expect(killed).toBeGreaterThan(0);
    expect(ex.stats().hardKilled).toBe(killed);
    expect((await quick(ex)).echo).toBeDefined();
  }, 60_000);

  it('spin with cooperative:false is hard-killed too', async () => {
    const ex = await make({ threads: 1, graceMs: 200 });
    await quick(ex); // the worker is up
    // Cancel once its one progress report says it is past the last checkpoint, however long a busy machine took.
    const { job, reports } = await submitRunning(ex, 's', 'nc', 'spin', { ms: 60_000, cooperative: false });
    expect(ex.tryCancel('s', 'nc')).toBe('cancelled-running');
    expect(await within(job.outcome, 10_000, 'non-cooperative spin')).toEqual({
      kind: 'cancelled',
      from: 'running',
      hardKilled: true,
    });
    expect(reports()).toBe(1); // never checks, so never reports again
    expect(ex.stats().hardKilled).toBe(1);
    await quick(ex);
  }, 90_000);

  it('a deadline ends the job with timedOut (an error is owed), by tool default or per call', async () => {
    const ex = await make({ threads: 2, graceMs: 300 });
    await warm(ex);
    let t0 = performance.now();
    const slow = await within(ex.submit('s', 1, { tool: 'slow_timeout', args: {} }).outcome, 10_000, 'slow_timeout');
    let took = performance.now() - t0;
    expect(slow).toEqual({ kind: 'timedOut', timeoutMs: 200, hardKilled: false });
    expect(took).toBeGreaterThanOrEqual(190);
    expect(took).toBeLessThan(DEADLINE_LIVENESS_BOUND_MS);

    t0 = performance.now();
    const overridden = await within(
      ex.submit('s', 2, { tool: 'spin', args: { ms: 30_000 }, timeoutMs: 150 }).outcome,
      10_000,
      'spin with timeoutMs',
    );
    took = performance.now() - t0;
    expect(overridden).toEqual({ kind: 'timedOut', timeoutMs: 150, hardKilled: false });
    expect(took).toBeGreaterThanOrEqual(140);
    expect(took).toBeLessThan(DEADLINE_LIVENESS_BOUND_MS);

    // The override also loosens: slow_timeout with a longer deadline is still cut, later.
    t0 = performance.now();
    const longer = await within(
      ex.submit('s', 3, { tool: 'slow_timeout', args: {}, timeoutMs: 600 }).outcome,
      10_000,
      'slow_timeout 600',
    );
    expect(longer).toEqual({ kind: 'timedOut', timeoutMs: 600, hardKilled: false });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(590);

    // A deadline on a stage that never checks: timed out, then hard-killed after the grace.
    const nc = await within(
      ex.submit('s', 4, { tool: 'tight', args: { ms: 60_000 }, timeoutMs: 100 }).outcome,
      10_000,
      'tight with timeoutMs',
    );
    expect(nc).toEqual({ kind: 'timedOut', timeoutMs: 100, hardKilled: true });

    // A cancel after the deadline won is ignored.
    const raced = ex.submit('s', 5, { tool: 'spin', args: { ms: 30_000 }, timeoutMs: 100 });
    expect(raced.state).toBe('running');
    const waitUntil = performance.now() + 5_000;
    while (raced.state === 'running' && performance.now() < waitUntil) await delay(2);
    expect(raced.state).toBe('timedOut');
    const lateCancel = ex.tryCancel('s', 5);
    expect(['too-late', 'unknown']).toContain(lateCancel);
    expect((await within(raced.outcome, 10_000, 'raced')).kind).toBe('timedOut');

    const stats = ex.stats();
    expect(stats.timedOut).toBe(5);
    expect(stats.hardKilled).toBe(1);
    expect(stats.cancelled).toBe(0);
    expect((await quick(ex)).echo).toBeDefined();
  }, 30_000);

  it('ctx.signal fires inside the worker for an async stage', async () => {
    const ex = await make({ threads: 1, graceMs: 10_000 });
    const file = join(scratch, 'sleep.jsonl');
    const before = await quick(ex);
    const { job } = await submitRunning(ex, 's', 'zz', 'sleep', { ms: 60_000, markFile: file });
    const t0 = performance.now();
    expect(ex.tryCancel('s', 'zz')).toBe('cancelled-running');
    const outcome = await within(job.outcome, 15_000, 'sleeping job');
    const took = performance.now() - t0;
    expect(outcome).toEqual(cancelledRunning);
    // Under the 10 s grace: the timer was aborted, not the thread (the same thread serves next, none hard-killed).
    expect(took).toBeLessThan(ABORTED_TIMER_LIVENESS_BOUND_MS);
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(1);
    const seen = JSON.parse(lines[0]!) as { aborted: boolean; elapsedMs: number; reason: string };
    expect(seen.aborted).toBe(true);
    expect(seen.reason).toBe('StopError');
    expect(seen.elapsedMs).toBeLessThan(60_000);
    expect((await quick(ex)).threadId).toBe(before.threadId);
    expect(ex.stats().hardKilled).toBe(0);

    // Control: uncancelled, the same stage sleeps to the end and reports no abort.
    const plain = await within(
      ex.submit('s', 'zz2', { tool: 'sleep', args: { ms: 20 } }).outcome,
      10_000,
      'short sleep',
    );
    expect(plain.kind).toBe('completed');
    expect((plain as Extract<JobOutcome, { kind: 'completed' }>).result.content[0]).toMatchObject({ type: 'text' });
    expect(JSON.parse((plain as { result: { content: { text: string }[] } }).result.content[0]!.text)).toMatchObject({
      aborted: false,
    });
  }, 30_000);
});
