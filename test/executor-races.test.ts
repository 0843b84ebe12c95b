/**
 * Completion versus cancellation, decided by the shared state word: exactly one side wins, a cancelled job
 * never yields a result or an error, a late cancel never suppresses a result.
 * Run: npx tsc -p . && npx vitest run test/executor-races.test.ts
 */
import { describe, expect, it } from 'vitest';
import { setTimeout as delay } from 'node:timers/promises';
import { DuplicateRequestError, type CancelResult, type Job, type JobOutcome } from '../dist/src/index.js';
import { inspectExecutor } from '../dist/src/executor/executor.js';
import {
  closeExecutorsAfterEach,
  make,
  within,
  quick,
  submitRunning,
  spinUntil,
  cancelledRunning,
  cancelledQueued,
  type QuickInfo,
} from './executor-helpers.js';

closeExecutorsAfterEach();

describe('cancellation races (docs/guarantees.md)', () => {
  it('(a) cancel while running: the stop handle runs, no result, the worker thread is kept', async () => {
    // No standby thread, so the job queued behind must run on the very thread the cancelled job leaves.
    const ex = await make({ threads: 1, spareThreads: 0, graceMs: 3000 });
    const before = await quick(ex);

    const { job, reports } = await submitRunning(ex, 's', 'a', 'spin', { ms: 30_000, stageMs: 1 });
    const late = ex.submit('s', 'b', { tool: 'quick', args: { tag: 'queued-behind' } });
    expect(job.state).toBe('running');
    expect(late.state).toBe('queued');

    const t0 = performance.now();
    const result = ex.tryCancel('s', 'a');
    const reportsAtCancel = reports();
    expect(result).toBe('cancelled-running');
    expect(job.stopSignal().aborted).toBe(true);
    // The decision is already in the shared word, before the worker even noticed.
    expect(job.state).toBe('cancelled');

    const outcome = await within(job.outcome, 10_000, 'cancelled job');
    expect(outcome).toEqual(cancelledRunning);
    expect(outcome).not.toHaveProperty('result');
    // Cooperative stop, not the grace timer (3 s): hardKilled false above says it ended at a checkpoint.
    // Nothing reached the caller after cancellation won, not even progress.
    expect(reports()).toBe(reportsAtCancel);

    // The job queued behind it ran next on the same, still living thread.
    const next = await within(late.outcome, 10_000, 'job queued behind the cancelled one');
    expect(next.kind).toBe('completed');
    const nextInfo = (next as Extract<JobOutcome, { kind: 'completed' }>).result.structuredContent as QuickInfo;
    expect(nextInfo.threadId).toBe(before.threadId);
    expect(nextInfo.at - (performance.timeOrigin + t0)).toBeLessThan(1500);

    const after = await quick(ex);
    expect(after.threadId).toBe(before.threadId);
    const stats = ex.stats();
    expect(stats.hardKilled).toBe(0);
    expect(stats.cancelled).toBe(1);
    expect(stats.completed).toBe(3);
    expect(stats.threads).toBe(ex.threads + ex.spareThreads);
    expect(stats.inFlight).toBe(0);
  }, 30_000);

  it('(a) a stage that finishes its work after cancellation won has its result discarded', async () => {
    // `tight` never checks; it runs its 300 ms to the end and returns a value,
    // but the response CAS fails, so nothing is sent and the thread is kept.
    const ex = await make({ threads: 1, graceMs: 10_000 });
    const before = await quick(ex);
    const { job } = await submitRunning(ex, 's', 'tight', 'tight', { ms: 300, announce: true });
    const t0 = performance.now();
    expect(ex.tryCancel('s', 'tight')).toBe('cancelled-running');
    const outcome = await within(job.outcome, 10_000, 'tight job');
    expect(outcome).toEqual(cancelledRunning);
    // It really ran on (it could not be stopped earlier) …
    expect(performance.now() - t0).toBeGreaterThan(100);
    // … and was not killed for it.
    expect((await quick(ex)).threadId).toBe(before.threadId);
    expect(ex.stats().hardKilled).toBe(0);
    expect(ex.stats().completed).toBe(2);
  }, 30_000);

  it('(b) completion just before the cancel: the result stands, the late cancel is ignored', async () => {
    const ex = await make({ threads: 1 });

    // 1. Completed and gone from the registry: the id is unknown now.
    const done = ex.submit('s', 1, { tool: 'quick', args: { tag: 1 } });
    const first = await within(done.outcome, 10_000, 'quick job');
    expect(first.kind).toBe('completed');
    expect(ex.registry.get('inbound', 's', 1)).toBeUndefined();
    expect(ex.tryCancel('s', 1)).toBe('unknown');
    expect(ex.stats().unknownCancelsIgnored).toBe(1);
    expect(await done.outcome).toBe(first);
    expect(done.state).toBe('completed');
    // The job object itself refuses too.
    expect(done.tryCancel()).toBe('too-late');
    expect(ex.stats().lateCancelsIgnored).toBe(1);

    // 2. Completion claimed (responding) but the response not yet handled on the
    //    main thread: the cancel still finds the entry and loses the CAS.
    //    The main thread busy-waits so it cannot process the worker's answer.
    const { job } = await submitRunning(ex, 's', 2, 'spin', { ms: 200, stageMs: 1 });
    expect(spinUntil(() => job.state === 'responding', 5_000)).toBe(true);
    expect(ex.registry.get('inbound', 's', 2)).toBe(job);
    expect(ex.tryCancel('s', 2)).toBe('too-late');
    expect(job.stopSignal().aborted).toBe(false);
    const second = await within(job.outcome, 10_000, 'spin job');
    expect(second.kind).toBe('completed');
    expect((second as Extract<JobOutcome, { kind: 'completed' }>).result.structuredContent).toMatchObject({
      sliceCount: 200,
    });

    const stats = ex.stats();
    expect(stats.lateCancelsIgnored).toBe(2);
    expect(stats.unknownCancelsIgnored).toBe(1);
    expect(stats.completed).toBe(2);
    expect(stats.cancelled).toBe(0);
    expect(stats.inFlight).toBe(0);
  }, 30_000);

  it('(c) unknown id, other session, 7 vs "7", wrong direction: all ignored', async () => {
    const ex = await make({ threads: 2, graceMs: 5000 });
    const done42 = ex.submit('S', 42, { tool: 'quick', args: { tag: 42 } });
    expect((await within(done42.outcome, 10_000, 'quick 42')).kind).toBe('completed');
    const numeric = ex.submit('S', 7, { tool: 'spin', args: { ms: 30_000 } });
    const text = ex.submit('S', '7', { tool: 'spin', args: { ms: 30_000 } });
    expect(ex.registry.size).toBe(2);
    expect(() => ex.reserve('S', 7)).toThrow(DuplicateRequestError);
    expect(() => ex.reserve('S', '7')).toThrow(DuplicateRequestError);

    // An outbound request of ours in the same session, with ids the peer also uses.
    let outboundStops = 0;
    const outbound = {
      direction: 'outbound' as const,
      session: 'S',
      id: 99,
      state: 'pending',
      stop: () => (outboundStops++, true),
    };
    expect(ex.registry.add(outbound)).toBe(true);
    const outbound7 = { ...outbound, id: 7 };
    expect(ex.registry.add(outbound7)).toBe(true);

    const ignored: CancelResult[] = [
      ex.tryCancel('S', 12345), // never existed
      ex.tryCancel('S', 42), // completed: gone
      ex.tryCancel('T', 7), // other session
      ex.tryCancel('T', '7'),
      ex.tryCancel('S', 99), // only an outbound request has it
      ex.tryCancel('S', '99'),
    ];
    expect(ignored).toEqual(Array(6).fill('unknown'));
    expect(ex.stats().unknownCancelsIgnored).toBe(6);
    expect(outboundStops).toBe(0);
    // (Right after an outcome, the slot's count frees a microtask later, so "7" may still be queued.)
    await delay(50);
    expect(numeric.state).toBe('running');
    expect(text.state).toBe('running');

    // "7" is not 7: cancelling the string stops only the string's job, and not our outbound 7.
    expect(ex.tryCancel('S', '7')).toBe('cancelled-running');
    expect(await within(text.outcome, 10_000, 'job "7"')).toEqual(cancelledRunning);
    expect(numeric.state).toBe('running');
    expect(outboundStops).toBe(0);
    expect(ex.tryCancel('S', '7')).toBe('unknown');

    expect(ex.tryCancel('S', 7)).toBe('cancelled-running');
    expect(await within(numeric.outcome, 10_000, 'job 7')).toEqual(cancelledRunning);
    expect(outboundStops).toBe(0);
    expect(ex.registry.get('outbound', 'S', 7)).toBe(outbound7);
    expect(ex.registry.get('outbound', 'S', 99)).toBe(outbound);

    const stats = ex.stats();
    expect(stats.unknownCancelsIgnored).toBe(7);
    expect(stats.lateCancelsIgnored).toBe(0);
    expect(stats.cancelled).toBe(2);
    ex.registry.remove(outbound);
    ex.registry.remove(outbound7);
    expect(ex.stats().inFlight).toBe(0);
  }, 30_000);

  it('cancelSession stops every inbound job of that session and its outbound requests, nothing else', async () => {
    const ex = await make({ threads: 2, graceMs: 5000 });
    const gone = [0, 1, 2].map((i) => ex.submit('X', i, { tool: 'spin', args: { ms: 30_000 } }));
    const kept = ex.submit('Y', 0, { tool: 'spin', args: { ms: 50 } });
    let stops = 0;
    ex.registry.add({ direction: 'outbound', session: 'X', id: 0, state: 'pending', stop: () => (stops++, true) });
    let otherStops = 0;
    const otherOutbound = {
      direction: 'outbound' as const,
      session: 'Y',
      id: 0,
      state: 'pending',
      stop: () => (otherStops++, true),
    };
    ex.registry.add(otherOutbound);
    expect(ex.cancelSession('X')).toBe(3);
    expect(stops).toBe(1);
    expect(otherStops).toBe(0);
    const outcomes = await within(Promise.all(gone.map((j) => j.outcome)), 10_000, 'session X jobs');
    for (const o of outcomes) expect(o.kind).toBe('cancelled');
    expect((await within(kept.outcome, 10_000, 'session Y job')).kind).toBe('completed');
  }, 30_000);

  it('(d) storm: 10,000 randomized completion-versus-cancellation races, exactly one outcome each', async () => {
    const N = 10_000;
    const LANES = 8;
    const ex = await make({ threads: 2, graceMs: 5_000, queueLimit: 256 });
    const sessions = ['s0', 's1', 's2', 's3'];
    type Strategy = 'sync' | 'microtasks' | 'immediate' | 'timer' | 'busy' | 'when-started' | 'after-outcome' | 'never';
    const strategies: Strategy[] = [
      'sync',
      'microtasks',
      'immediate',
      'timer',
      'busy',
      'busy',
      'when-started',
      'after-outcome',
      'never',
    ];
    interface Rec {
      i: number;
      tool: 'quick' | 'spin';
      ms: number;
      strategy: Strategy;
      cancel: CancelResult | 'none';
      outcome: JobOutcome;
    }
    const recs: Rec[] = [];
    const threadIds = new Set<number>();
    let next = 0;
    const rnd = (n: number) => Math.floor(Math.random() * n);

    async function lane(): Promise<void> {
      while (next < N) {
        const i = next++;
        const session = sessions[i % sessions.length]!;
        const id: string | number = i % 3 === 0 ? String(i) : i;
        const tool = Math.random() < 0.5 ? 'quick' : 'spin';
        const ms = rnd(3);
        const job: Job = ex.submit(session, id, { tool, args: tool === 'quick' ? { tag: i } : { ms, stageMs: 1 } });
        const strategy = strategies[rnd(strategies.length)]!;
        let cancel: CancelResult | 'none' = 'none';
        switch (strategy) {
          case 'sync':
            cancel = ex.tryCancel(session, id);
            break;
          case 'microtasks':
            for (let k = rnd(50); k > 0; k--) await Promise.resolve();
            cancel = ex.tryCancel(session, id);
            break;
          case 'immediate':
            await new Promise((resolve) => setImmediate(resolve));
            cancel = ex.tryCancel(session, id);
            break;
          case 'timer':
            await delay(rnd(3));
            cancel = ex.tryCancel(session, id);
            break;
          case 'busy': {
            // Block the main thread so the worker can finish and claim meanwhile.
            const until = performance.now() + Math.random() * (tool === 'quick' ? 0.4 : ms + 0.5);
            spinUntil(() => performance.now() >= until, 5);
            cancel = ex.tryCancel(session, id);
            break;
          }
          case 'when-started':
            while (job.state === 'queued') await new Promise((resolve) => setImmediate(resolve));
            spinUntil(() => false, Math.random() * 0.3);
            cancel = ex.tryCancel(session, id);
            break;
          case 'after-outcome':
            await within(job.outcome, 30_000, `storm job ${i}`);
            cancel = ex.tryCancel(session, id);
            break;
          case 'never':
            break;
        }
        const outcome = await within(job.outcome, 30_000, `storm job ${i}`);
        recs.push({ i, tool, ms, strategy, cancel, outcome });
      }
    }

    const t0 = performance.now();
    await within(Promise.all(Array.from({ length: LANES }, lane)), 90_000, 'storm');
    const elapsed = performance.now() - t0;

    expect(recs.length).toBe(N);
    expect(new Set(recs.map((r) => r.i)).size).toBe(N);
    const tally: Record<string, number> = {};
    let completed = 0;
    let cancelled = 0;
    for (const r of recs) {
      tally[r.cancel] = (tally[r.cancel] ?? 0) + 1;
      const o = r.outcome;
      if (r.cancel === 'cancelled-queued') {
        expect(o, `job ${r.i}`).toEqual(cancelledQueued);
      } else if (r.cancel === 'cancelled-running') {
        expect(o, `job ${r.i}`).toEqual(cancelledRunning);
      } else {
        // 'too-late', 'unknown' or no cancel at all: the response is owed, and it is this job's own.
        expect(o.kind, `job ${r.i} (${r.cancel}, ${r.strategy})`).toBe('completed');
        const sc = (o as Extract<JobOutcome, { kind: 'completed' }>).result.structuredContent as Record<
          string,
          unknown
        >;
        if (r.tool === 'quick') {
          expect((sc as unknown as QuickInfo).echo.tag).toBe(r.i);
          threadIds.add((sc as unknown as QuickInfo).threadId);
        } else {
          expect(sc.sliceCount).toBe(Math.max(1, r.ms));
        }
      }
      if (o.kind === 'completed') completed++;
      else if (o.kind === 'cancelled') cancelled++;
      // The outcome is settled once; awaiting it again yields the same object.
      if (r.strategy === 'after-outcome') expect(r.cancel).toBe('unknown');
      if (r.strategy === 'never') expect(o.kind).toBe('completed');
    }
    expect(completed + cancelled).toBe(N);

    // Both sides of the race really happened, in all their forms.
    expect(tally['cancelled-queued'] ?? 0).toBeGreaterThan(0);
    expect(tally['cancelled-running'] ?? 0).toBeGreaterThan(0);
    expect(tally['too-late'] ?? 0).toBeGreaterThan(0);
    expect(tally['unknown'] ?? 0).toBeGreaterThan(0);
    // Every completion ran on one of the original threads (none was replaced); the standby one takes lent slots.
    expect(threadIds.size).toBeGreaterThanOrEqual(ex.threads);
    expect(threadIds.size).toBeLessThanOrEqual(ex.threads + ex.spareThreads);

    // Counters agree with the outcomes; nothing leaked.
    const stats = ex.stats();
    expect(stats.completed).toBe(completed);
    expect(stats.cancelled).toBe(cancelled);
    expect(stats.failed).toBe(0);
    expect(stats.timedOut).toBe(0);
    expect(stats.hardKilled).toBe(0);
    expect(stats.lateCancelsIgnored).toBe(tally['too-late'] ?? 0);
    expect(stats.unknownCancelsIgnored).toBe(tally['unknown'] ?? 0);
    expect(stats.running).toBe(0);
    expect(stats.queued).toBe(0);
    expect(stats.inFlight).toBe(0);
    expect(ex.registry.size).toBe(0);
    expect(inspectExecutor(ex).slotsFree).toBe(inspectExecutor(ex).slotCapacity);
    expect(stats.threads).toBe(ex.threads + ex.spareThreads);
    console.log(
      `storm: ${N} jobs in ${(elapsed / 1000).toFixed(1)} s; cancel results ${JSON.stringify(tally)}; completed ${completed}, cancelled ${cancelled}`,
    );
  }, 120_000);
});
