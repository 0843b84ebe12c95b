/**
 * The standby thread against the real pool (the policy alone, with a fake clock: test/unit/standby.test.ts):
 * a stopped job's slot passes to the next job at once while a core is free, after the hand-off delay when
 * every core is busy, never to more than spareThreads jobs.
 * Run: npx tsc -p . && npx vitest run test/executor-standby.test.ts
 */
import { describe, expect, it } from 'vitest';
import { setTimeout as delay } from 'node:timers/promises';
import { type Executor, type Job, type JobOutcome } from '../dist/src/index.js';
import {
  closeExecutorsAfterEach,
  make,
  within,
  quick,
  submitRunning,
  cancelledRunning,
  type QuickInfo,
} from './executor-helpers.js';

closeExecutorsAfterEach();

/** Submits `tight` (it never checks) with its announcement, and waits for that: the thread it loops on, and since when. */
async function submitAnnounced(ex: Executor, id: string, ms: number): Promise<{ job: Job; announced: string }> {
  let announced: string | undefined;
  const job = ex.submit('s', id, {
    tool: 'tight',
    args: { ms, announce: true },
    onProgress: (r) => (announced ??= r.message),
  });
  await within(
    new Promise<void>((resolve) => {
      const poll = setInterval(() => announced !== undefined && (clearInterval(poll), resolve()), 2);
    }),
    10_000,
    'tight reaching a worker',
  );
  return { job, announced: announced! };
}

describe('the standby thread takes the slot of a stopped job', () => {
  it('(a) with a standby thread and a free core, the job queued behind a cancelled one starts at once, while the cancelled one winds down', async () => {
    const ex = await make({ threads: 1, spareThreads: 1, cores: 2, graceMs: 10_000 });
    // `tight` never checks: after the cancel it keeps its thread for the rest of its 1.5 s.
    const { job: stuck, announced: stuckOn } = await submitAnnounced(ex, 'tight', 1_500);
    const behind = ex.submit('s', 'behind', { tool: 'quick', args: { tag: 'behind' } });
    expect(behind.state).toBe('queued');
    let stuckSettled = false;
    void stuck.outcome.then(() => (stuckSettled = true));

    expect(ex.tryCancel('s', 'tight')).toBe('cancelled-running');
    // Handed over synchronously, inside cancel(). A zero-work job may already be responding on its worker.
    expect(['running', 'responding']).toContain(behind.state);
    const next = await within(behind.outcome, 10_000, 'job behind the cancelled one');
    expect(next.kind).toBe('completed');
    expect(stuckSettled).toBe(false);
    const { threadId } = (next as Extract<JobOutcome, { kind: 'completed' }>).result.structuredContent as QuickInfo;

    expect(await within(stuck.outcome, 10_000, 'the stopped job')).toEqual(cancelledRunning);
    // Once the stopped job is back, only `threads` jobs run again: two more queue one behind the other.
    const [a, b] = [
      ex.submit('s', 'a', { tool: 'tight', args: { ms: 200 } }),
      ex.submit('s', 'b', { tool: 'quick', args: {} }),
    ];
    expect(a.state).toBe('running');
    expect(b.state).toBe('queued');
    await within(b.outcome, 10_000, 'b');
    const stats = ex.stats();
    expect(stats.hardKilled).toBe(0);
    expect(stats.threads).toBe(2);
    // It ran on the other (standby) thread, while the stopped one still held its own.
    expect(stuckOn).toMatch(/^looping on thread \d+ since [\d.]+$/);
    expect(stuckOn).not.toMatch(new RegExp(`^looping on thread ${threadId} `));
  }, 30_000);

  it('(a) with every core busy, a job that stops at its next checkpoint keeps its slot: the job behind waits for it, not for the standby', async () => {
    const ex = await make({ threads: 1, spareThreads: 1, cores: 1, handoffDelayMs: 5_000, graceMs: 10_000 });
    // Admitted jobs run on the one main thread while it is free; the standby only on a loan.
    const mainThread = (await quick(ex)).threadId;
    // `sleep` stops as soon as its signal fires, well within the hand-off delay.
    const { job: stopper } = await submitRunning(ex, 's', 'stopper', 'sleep', { ms: 60_000 });
    const behind = ex.submit('s', 'behind', { tool: 'quick', args: {} });
    const cancelledAt = performance.timeOrigin + performance.now();
    expect(ex.tryCancel('s', 'stopper')).toBe('cancelled-running');
    expect(behind.state).toBe('queued'); // no hand-off: the only core is still the stopper's
    const outcome = await within(behind.outcome, 10_000, 'job behind');
    expect(outcome.kind).toBe('completed');
    const info = (outcome as Extract<JobOutcome, { kind: 'completed' }>).result.structuredContent as QuickInfo;
    // It waited for the stopper's thread (one job per thread: it started once the stopper's worker had returned),
    // not for the standby. It may start before the stopper's outcome settles: a freed slot is handed on first.
    expect(info.threadId).toBe(mainThread);
    expect(info.at).toBeGreaterThanOrEqual(cancelledAt);
    expect(await stopper.outcome).toEqual(cancelledRunning);
  }, 30_000);

  it('(a) with every core busy, a job that keeps running past the hand-off delay passes its slot to the standby then', async () => {
    const ex = await make({ threads: 1, spareThreads: 1, cores: 1, handoffDelayMs: 200, graceMs: 10_000 });
    const { job: stuck } = await submitRunning(ex, 's', 'tight', 'tight', { ms: 1_500, announce: true });
    const behind = ex.submit('s', 'behind', { tool: 'quick', args: {} });
    let stuckSettled = false;
    void stuck.outcome.then(() => (stuckSettled = true));
    const cancelledAt = performance.timeOrigin + performance.now();
    expect(ex.tryCancel('s', 'tight')).toBe('cancelled-running');
    expect(behind.state).toBe('queued');
    const outcome = await within(behind.outcome, 10_000, 'job behind');
    const info = (outcome as Extract<JobOutcome, { kind: 'completed' }>).result.structuredContent as QuickInfo;
    // Not before the delay (timers never fire early; 5 ms for clock granularity), and while the stuck job still runs.
    expect(info.at - cancelledAt).toBeGreaterThanOrEqual(195);
    expect(stuckSettled).toBe(false);
    expect(await within(stuck.outcome, 10_000, 'the stopped job')).toEqual(cancelledRunning);
    expect(ex.stats().hardKilled).toBe(0);
  }, 30_000);

  it('(a) without a standby thread, the job queued behind waits until the cancelled one has reached a boundary', async () => {
    const ex = await make({ threads: 1, spareThreads: 0, graceMs: 10_000 });
    const { job: stuck, announced } = await submitAnnounced(ex, 'tight', 600);
    const behind = ex.submit('s', 'behind', { tool: 'quick', args: {} });
    expect(ex.tryCancel('s', 'tight')).toBe('cancelled-running');
    expect(behind.state).toBe('queued'); // no slot is lent: nothing to lend it to
    const next = await within(behind.outcome, 10_000, 'job behind');
    expect(await within(stuck.outcome, 10_000, 'the stopped job')).toEqual(cancelledRunning);
    // It ran on the stopped job's thread after that job's loop had ended there (one thread, one clock), and no thread was replaced.
    const [, thread, since] = /^looping on thread (\d+) since ([\d.]+)$/.exec(announced)!;
    const info = (next as Extract<JobOutcome, { kind: 'completed' }>).result.structuredContent as QuickInfo;
    expect(info.threadId).toBe(Number(thread));
    expect(info.at).toBeGreaterThanOrEqual(Number(since) + 600);
    expect(ex.stats()).toMatchObject({ hardKilled: 0, threads: 1 });
  }, 30_000);

  it('(a) a thread that replaces a hard-stopped one has loaded the tools before its first job', async () => {
    const ex = await make({ threads: 1, spareThreads: 1, cores: 2, graceMs: 100 });
    const { job: stuck } = await submitRunning(ex, 's', 'stuck', 'tight', { ms: 60_000, announce: true });
    ex.tryCancel('s', 'stuck');
    expect(await within(stuck.outcome, 10_000, 'hard stop')).toMatchObject({ hardKilled: true });
    await delay(1_000); // the replacement starts meanwhile
    // Keep the surviving thread busy, and cancel its job: the lent slot can only go to the replacement.
    const { job: busy } = await submitRunning(ex, 's', 'busy', 'tight', { ms: 60_000, announce: true });
    const submittedAt = performance.timeOrigin + performance.now();
    const next = ex.submit('s', 'next', { tool: 'quick', args: {} });
    ex.tryCancel('s', 'busy');
    const outcome = await within(next.outcome, 10_000, 'job on the replacement thread');
    const info = (outcome as Extract<JobOutcome, { kind: 'completed' }>).result.structuredContent as QuickInfo;
    expect(info.loadedAt).toBeLessThan(submittedAt);
    await within(busy.outcome, 10_000, 'second hard stop');
  }, 30_000);

  it('(a) stopped jobs lend at most spareThreads slots', async () => {
    const ex = await make({ threads: 1, spareThreads: 1, cores: 4, graceMs: 10_000 });
    const { job: first } = await submitRunning(ex, 's', 'first', 'tight', { ms: 800, announce: true });
    const second = ex.submit('s', 'second', { tool: 'tight', args: { ms: 800 } });
    const third = ex.submit('s', 'third', { tool: 'quick', args: {} });
    const order: string[] = [];
    for (const [name, job] of [
      ['first', first],
      ['second', second],
      ['third', third],
    ] as const)
      void job.outcome.then(() => order.push(name));
    expect(ex.tryCancel('s', 'first')).toBe('cancelled-running');
    expect(second.state).toBe('running'); // on the standby thread
    expect(ex.tryCancel('s', 'second')).toBe('cancelled-running');
    // Two jobs winding down, one standby: the third waits for a thread to come back.
    expect(third.state).toBe('queued');
    await within(third.outcome, 10_000, 'third');
    expect(order.indexOf('third')).toBeGreaterThan(order.indexOf('first'));
    expect((await third.outcome).kind).toBe('completed');
  }, 30_000);
});
