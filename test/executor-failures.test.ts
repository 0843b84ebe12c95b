/**
 * Failures are owed as errors (stage errors, crashes, out of memory, unclonable results, bad arguments),
 * and the pool survives them.
 * Run: npx tsc -p . && npx vitest run test/executor-failures.test.ts
 */
import { describe, expect, it } from 'vitest';
import { setTimeout as delay } from 'node:timers/promises';
import { type JobOutcome } from '../dist/src/index.js';
import { closeExecutorsAfterEach, make, within, quick } from './executor-helpers.js';

closeExecutorsAfterEach();

describe('failures are owed as errors, and the pool survives them', () => {
  it('a throwing stage fails with code stage, naming the stage', async () => {
    const ex = await make({ threads: 2 });
    const outcome = await within(ex.submit('s', 1, { tool: 'throws', args: {} }).outcome, 10_000, 'throws');
    expect(outcome).toMatchObject({ kind: 'failed', code: 'stage', stage: 'explode' });
    const message = (outcome as Extract<JobOutcome, { kind: 'failed' }>).message;
    expect(message).toContain("'explode'");
    expect(message).toContain('boom');
    // A stage error is not a crash: no thread was lost, the pool serves on.
    await quick(ex);
    await quick(ex);
    expect(ex.stats().threads).toBe(ex.threads + ex.spareThreads);
    expect(ex.stats().failed).toBe(1);
    expect(ex.stats().completed).toBe(2);
  }, 30_000);

  for (const mode of ['exit', 'throw'] as const) {
    it(`a crashing worker (${mode}) fails with code crash; concurrent jobs complete`, async () => {
      const ex = await make({ threads: 2 });
      const neighbour = ex.submit('s', 'n', { tool: 'spin', args: { ms: 400 } });
      await delay(20);
      const crash = ex.submit('s', 'c', { tool: 'crash', args: { mode } });
      const behind = [0, 1, 2].map((i) => ex.submit('s', `b${i}`, { tool: 'quick', args: { tag: i } }));
      const outcome = await within(crash.outcome, 10_000, 'crash');
      expect(outcome).toMatchObject({ kind: 'failed', code: 'crash' });
      if (mode === 'throw') expect((outcome as { message: string }).message).toContain('uncaught asynchronous crash');
      expect((await within(neighbour.outcome, 10_000, 'neighbour')).kind).toBe('completed');
      for (const j of behind) expect((await within(j.outcome, 10_000, 'job behind the crash')).kind).toBe('completed');
      await quick(ex);
      const stats = ex.stats();
      expect(stats.threads).toBe(ex.threads + ex.spareThreads);
      expect(stats.failed).toBe(1);
      expect(stats.completed).toBe(5);
      expect(stats.hardKilled).toBe(0);
      expect(stats.inFlight).toBe(0);
    }, 30_000);
  }

  it('running out of memory fails that job only', async () => {
    const ex = await make({ threads: 2, resourceLimits: { maxOldGenerationSizeMb: 32 } });
    const neighbour = ex.submit('s', 'n', { tool: 'spin', args: { ms: 300 } });
    const oom = ex.submit('s', 'oom', { tool: 'oom', args: {} });
    const outcome = await within(oom.outcome, 20_000, 'oom');
    expect(outcome).toMatchObject({ kind: 'failed', code: 'crash' });
    expect((outcome as { message: string }).message).toMatch(/memory/i);
    expect((await within(neighbour.outcome, 10_000, 'neighbour')).kind).toBe('completed');
    await quick(ex);
    await quick(ex);
    expect(ex.stats().threads).toBe(ex.threads + ex.spareThreads);
    expect(ex.stats().failed).toBe(1);
  }, 40_000);

  it('an unclonable result fails with a clear message', async () => {
    const ex = await make({ threads: 1 });
    const before = await quick(ex);
    const fn = await within(
      ex.submit('s', 1, { tool: 'unclonable', args: { kind: 'function' } }).outcome,
      10_000,
      'unclonable function',
    );
    expect(fn).toMatchObject({ kind: 'failed', code: 'stage' });
    expect((fn as { message: string }).message).toMatch(/callback is a function/);
    const inst = await within(
      ex.submit('s', 2, { tool: 'unclonable', args: { kind: 'instance' } }).outcome,
      10_000,
      'unclonable instance',
    );
    expect(inst).toMatchObject({ kind: 'failed', code: 'stage' });
    expect((inst as { message: string }).message).toMatch(/Widget/);
    // Refused before posting: the same thread is still there.
    expect((await quick(ex)).threadId).toBe(before.threadId);
  }, 30_000);

  it('invalid arguments and unknown tools fail at once, without a worker', async () => {
    const ex = await make({ threads: 1 });
    const bad = [
      ex.submit('s', 1, { tool: 'spin', args: { ms: 'lots' } }),
      ex.submit('s', 2, { tool: 'spin', args: { ms: -1 } }),
      ex.submit('s', 3, { tool: 'spin', args: {} }),
      ex.submit('s', 4, { tool: 'crash', args: { mode: 'politely' } }),
    ];
    for (const j of bad) {
      const o = await j.outcome;
      expect(o).toMatchObject({ kind: 'failed', code: 'invalid_arguments' });
      expect((o as { message: string }).message).toMatch(/invalid arguments for tool '(spin|crash)'/);
    }
    expect(await ex.submit('s', 5, { tool: 'no_such_tool', args: {} }).outcome).toMatchObject({
      kind: 'failed',
      code: 'unknown_tool',
    });
    expect(ex.stats().inFlight).toBe(0);
    expect(ex.stats().failed).toBe(5);
    // Validation is on the main thread: the crash tool never ran, the thread is intact.
    await quick(ex);
    expect(ex.stats().threads).toBe(ex.threads + ex.spareThreads);
  }, 30_000);
});
