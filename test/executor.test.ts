/**
 * Executor tests against the real Piscina pool, through the compiled code.
 * Run: npx tsc -p . && npx vitest run test/executor.test.ts
 *
 * Every race is decided by the job's shared state word; these tests check
 * from the outside that exactly one side wins, that a cancelled job never
 * yields a result or an error, that a late cancel never suppresses a result,
 * and that the pool (and its threads) survive every way a job can end.
 */
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DuplicateRequestError, Executor, type CancelResult, type ExecutorOptions, type Job, type JobOutcome } from '../dist/src/index.js';
import { inspectExecutor } from '../dist/src/executor/executor.js';

const FIXTURES = new URL('../dist/test/fixtures/failing-tools.js', import.meta.url);

// ---- helpers -------------------------------------------------------------

const open: Executor[] = [];
async function make(options: ExecutorOptions = {}): Promise<Executor> {
  const ex = await Executor.create({ toolModules: [FIXTURES], ...options });
  open.push(ex);
  return ex;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((ex) => ex.close()));
}, 30_000);

const scratch = mkdtempSync(join(tmpdir(), 'executor-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Rejects instead of hanging: every await on the pool goes through this. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

let nextId = 1;
const freshId = () => nextId++;

interface QuickInfo {
  echo: { tag?: string | number };
  threadId: number;
  at: number;
  loadedAt: number;
}

/** Runs `quick` and returns what it saw in the worker, plus how long the round trip took. */
async function quick(ex: Executor, session = 'probe'): Promise<QuickInfo & { ms: number }> {
  const t0 = performance.now();
  const tag = `q${freshId()}`;
  const outcome = await within(ex.submit(session, tag, { tool: 'quick', args: { tag } }).outcome, 10_000, 'quick job');
  const ms = performance.now() - t0;
  expect(outcome.kind).toBe('completed');
  const info = (outcome as Extract<JobOutcome, { kind: 'completed' }>).result.structuredContent as unknown as QuickInfo;
  expect(info.echo.tag).toBe(tag);
  return { ...info, ms };
}

/**
 * Waits until every worker thread has booted, by running one short async job
 * per thread at once. Deadlines and grace timers start when a job is handed to
 * the pool, so a cold worker's boot time would otherwise count against them.
 */
async function warm(ex: Executor): Promise<void> {
  const jobs = Array.from({ length: ex.threads }, (_, i) => ex.submit('warm', `w${freshId()}-${i}`, { tool: 'sleep', args: { ms: 30 } }));
  for (const j of jobs) expect((await within(j.outcome, 10_000, 'warm-up')).kind).toBe('completed');
}

/** Submits a job whose tool reports progress once it is really executing in a worker; resolves when it does. */
async function submitRunning(ex: Executor, session: string, id: string | number, tool: string, args: Record<string, unknown>, extra: { timeoutMs?: number } = {}) {
  let reports = 0;
  let first!: () => void;
  const started = new Promise<void>((resolve) => (first = resolve));
  const job = ex.submit(session, id, {
    tool,
    args,
    ...extra,
    onProgress: () => {
      reports++;
      first();
    },
  });
  await within(started, 10_000, `${tool} reaching a worker`);
  return { job, reports: () => reports };
}

/** Busy-waits on the main thread (no event loop turns), up to `limitMs`, until `done()`. */
function spinUntil(done: () => boolean, limitMs: number): boolean {
  const end = performance.now() + limitMs;
  while (performance.now() < end) if (done()) return true;
  return done();
}

const cancelledRunning = { kind: 'cancelled', from: 'running', hardKilled: false } as const;
const cancelledQueued = { kind: 'cancelled', from: 'queued', hardKilled: false } as const;

// ---- seed section 6 ------------------------------------------------------

describe('cancellation races (README: What cancellation guarantees)', () => {
  it('(a) cancel while running: the stop handle runs, no result, the worker thread is kept', async () => {
    // No standby thread, so the job queued behind must run on the very thread the cancelled job leaves.
    const ex = await make({ threads: 1, spareThreads: 0, graceMs: 3000 });
    const before = await quick(ex);

    const { job, reports } = await submitRunning(ex, 's', 'a', 'spin', { ms: 30_000, stageMs: 1 });
    const late = ex.submit('s', 'b', { tool: 'quick', args: { tag: 'queued-behind' } });
    expect(job.state).toBe('running');
    expect(late.state).toBe('queued');

    const t0 = performance.now();
    const result = ex.cancel('s', 'a', 'user stopped it');
    const reportsAtCancel = reports();
    expect(result).toBe('cancelled-running');
    expect(job.stopSignal().aborted).toBe(true);
    // The decision is already in the shared word, before the worker even noticed.
    expect(job.state).toBe('cancelled');

    const outcome = await within(job.outcome, 10_000, 'cancelled job');
    const stoppedAfter = performance.now() - t0;
    expect(outcome).toEqual(cancelledRunning);
    expect(outcome).not.toHaveProperty('result');
    // Cooperative stop, not the grace timer (3 s): it ended at a checkpoint.
    expect(stoppedAfter).toBeLessThan(1500);
    // Nothing reached the caller after cancellation won, not even progress.
    expect(reports()).toBe(reportsAtCancel);

    // The job queued behind it ran next on the same, still living thread.
    const next = await within(late.outcome, 10_000, 'job queued behind the cancelled one');
    expect(next.kind).toBe('completed');
    const nextInfo = (next as Extract<JobOutcome, { kind: 'completed' }>).result.structuredContent as unknown as QuickInfo;
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

  it('(a) with a standby thread and a free core, the job queued behind a cancelled one starts at once, while the cancelled one winds down', async () => {
    const ex = await make({ threads: 1, spareThreads: 1, cores: 2, graceMs: 10_000 });
    // `tight` never checks: after the cancel it keeps its thread for the rest of its 1.5 s.
    const { job: stuck } = await submitRunning(ex, 's', 'tight', 'tight', { ms: 1_500, announce: true });
    const behind = ex.submit('s', 'behind', { tool: 'quick', args: { tag: 'behind' } });
    expect(behind.state).toBe('queued');
    let stuckSettled = false;
    void stuck.outcome.then(() => (stuckSettled = true));

    expect(ex.cancel('s', 'tight')).toBe('cancelled-running');
    // Handed over synchronously, inside cancel(). A zero-work job may already be responding on its worker.
    expect(['running', 'responding']).toContain(behind.state);
    const next = await within(behind.outcome, 10_000, 'job behind the cancelled one');
    expect(next.kind).toBe('completed');
    expect(stuckSettled).toBe(false);
    const { threadId } = (next as Extract<JobOutcome, { kind: 'completed' }>).result.structuredContent as unknown as QuickInfo;

    expect(await within(stuck.outcome, 10_000, 'the stopped job')).toEqual(cancelledRunning);
    // Once the stopped job is back, only `threads` jobs run again: two more queue one behind the other.
    const [a, b] = [ex.submit('s', 'a', { tool: 'tight', args: { ms: 200 } }), ex.submit('s', 'b', { tool: 'quick', args: {} })];
    expect(a.state).toBe('running');
    expect(b.state).toBe('queued');
    await within(b.outcome, 10_000, 'b');
    const stats = ex.stats();
    expect(stats.hardKilled).toBe(0);
    expect(stats.threads).toBe(2);
    expect(threadId).toBeGreaterThan(0);
  }, 30_000);

  it('(a) with every core busy, a job that stops at its next checkpoint keeps its slot: the job behind waits for it, not for the standby', async () => {
    const ex = await make({ threads: 1, spareThreads: 1, cores: 1, handoffDelayMs: 5_000, graceMs: 10_000 });
    // `sleep` stops as soon as its signal fires, well within the hand-off delay.
    const { job: stopper } = await submitRunning(ex, 's', 'stopper', 'sleep', { ms: 60_000 });
    const behind = ex.submit('s', 'behind', { tool: 'quick', args: {} });
    let stopperSettledAt: number | undefined;
    void stopper.outcome.then(() => (stopperSettledAt = performance.timeOrigin + performance.now()));
    expect(ex.cancel('s', 'stopper')).toBe('cancelled-running');
    expect(behind.state).toBe('queued'); // no hand-off: the only core is still the stopper's
    const outcome = await within(behind.outcome, 10_000, 'job behind');
    expect(outcome.kind).toBe('completed');
    const info = (outcome as Extract<JobOutcome, { kind: 'completed' }>).result.structuredContent as unknown as QuickInfo;
    expect(stopperSettledAt).toBeDefined();
    expect(info.at).toBeGreaterThanOrEqual(stopperSettledAt!);
    expect(await stopper.outcome).toEqual(cancelledRunning);
  }, 30_000);

  it('(a) with every core busy, a job that keeps running past the hand-off delay passes its slot to the standby then', async () => {
    const ex = await make({ threads: 1, spareThreads: 1, cores: 1, handoffDelayMs: 200, graceMs: 10_000 });
    const { job: stuck } = await submitRunning(ex, 's', 'tight', 'tight', { ms: 1_500, announce: true });
    const behind = ex.submit('s', 'behind', { tool: 'quick', args: {} });
    let stuckSettled = false;
    void stuck.outcome.then(() => (stuckSettled = true));
    const cancelledAt = performance.timeOrigin + performance.now();
    expect(ex.cancel('s', 'tight')).toBe('cancelled-running');
    expect(behind.state).toBe('queued');
    const outcome = await within(behind.outcome, 10_000, 'job behind');
    const info = (outcome as Extract<JobOutcome, { kind: 'completed' }>).result.structuredContent as unknown as QuickInfo;
    // Not before the delay (timers never fire early; 5 ms for clock granularity), and while the stuck job still runs.
    expect(info.at - cancelledAt).toBeGreaterThanOrEqual(195);
    expect(stuckSettled).toBe(false);
    expect(await within(stuck.outcome, 10_000, 'the stopped job')).toEqual(cancelledRunning);
    expect(ex.stats().hardKilled).toBe(0);
  }, 30_000);

  it('(a) without a standby thread, the job queued behind waits until the cancelled one has reached a boundary', async () => {
    const ex = await make({ threads: 1, spareThreads: 0, graceMs: 10_000 });
    const { job: stuck } = await submitRunning(ex, 's', 'tight', 'tight', { ms: 600, announce: true });
    const behind = ex.submit('s', 'behind', { tool: 'quick', args: {} });
    const order: string[] = [];
    void stuck.outcome.then(() => order.push('stuck'));
    void behind.outcome.then(() => order.push('behind'));
    expect(ex.cancel('s', 'tight')).toBe('cancelled-running');
    expect(behind.state).toBe('queued');
    await within(behind.outcome, 10_000, 'job behind');
    expect(order).toEqual(['stuck', 'behind']);
  }, 30_000);

  it('(a) a thread that replaces a hard-stopped one has loaded the tools before its first job', async () => {
    const ex = await make({ threads: 1, spareThreads: 1, cores: 2, graceMs: 100 });
    const { job: stuck } = await submitRunning(ex, 's', 'stuck', 'tight', { ms: 60_000, announce: true });
    ex.cancel('s', 'stuck');
    expect(await within(stuck.outcome, 10_000, 'hard stop')).toMatchObject({ hardKilled: true });
    await delay(1_000); // the replacement starts meanwhile
    // Keep the surviving thread busy, and cancel its job: the lent slot can only go to the replacement.
    const { job: busy } = await submitRunning(ex, 's', 'busy', 'tight', { ms: 60_000, announce: true });
    const submittedAt = performance.timeOrigin + performance.now();
    const next = ex.submit('s', 'next', { tool: 'quick', args: {} });
    ex.cancel('s', 'busy');
    const outcome = await within(next.outcome, 10_000, 'job on the replacement thread');
    const info = (outcome as Extract<JobOutcome, { kind: 'completed' }>).result.structuredContent as unknown as QuickInfo;
    expect(info.loadedAt).toBeLessThan(submittedAt);
    await within(busy.outcome, 10_000, 'second hard stop');
  }, 30_000);

  it('(a) stopped jobs lend at most spareThreads slots', async () => {
    const ex = await make({ threads: 1, spareThreads: 1, cores: 4, graceMs: 10_000 });
    const { job: first } = await submitRunning(ex, 's', 'first', 'tight', { ms: 800, announce: true });
    const second = ex.submit('s', 'second', { tool: 'tight', args: { ms: 800 } });
    const third = ex.submit('s', 'third', { tool: 'quick', args: {} });
    const order: string[] = [];
    for (const [name, job] of [['first', first], ['second', second], ['third', third]] as const) void job.outcome.then(() => order.push(name));
    expect(ex.cancel('s', 'first')).toBe('cancelled-running');
    expect(second.state).toBe('running'); // on the standby thread
    expect(ex.cancel('s', 'second')).toBe('cancelled-running');
    // Two jobs winding down, one standby: the third waits for a thread to come back.
    expect(third.state).toBe('queued');
    await within(third.outcome, 10_000, 'third');
    expect(order.indexOf('third')).toBeGreaterThan(order.indexOf('first'));
    expect((await third.outcome).kind).toBe('completed');
  }, 30_000);

  it('(a) a stage that finishes its work after cancellation won has its result discarded', async () => {
    // `tight` never checks; it runs its 300 ms to the end and returns a value,
    // but the response CAS fails, so nothing is sent and the thread is kept.
    const ex = await make({ threads: 1, graceMs: 10_000 });
    const before = await quick(ex);
    const { job } = await submitRunning(ex, 's', 'tight', 'tight', { ms: 300, announce: true });
    const t0 = performance.now();
    expect(ex.cancel('s', 'tight')).toBe('cancelled-running');
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
    expect(ex.cancel('s', 1)).toBe('unknown');
    expect(ex.stats().unknownCancelsIgnored).toBe(1);
    expect(await done.outcome).toBe(first);
    expect(done.state).toBe('completed');
    // The job object itself refuses too.
    expect(done.cancel()).toBe('too-late');
    expect(ex.stats().lateCancelsIgnored).toBe(1);

    // 2. Completion claimed (responding) but the response not yet handled on the
    //    main thread: the cancel still finds the entry and loses the CAS.
    //    The main thread busy-waits so it cannot process the worker's answer.
    const { job } = await submitRunning(ex, 's', 2, 'spin', { ms: 200, stageMs: 1 });
    expect(spinUntil(() => job.state === 'responding', 5_000)).toBe(true);
    expect(ex.registry.get('inbound', 's', 2)).toBe(job);
    expect(ex.cancel('s', 2)).toBe('too-late');
    expect(job.stopSignal().aborted).toBe(false);
    const second = await within(job.outcome, 10_000, 'spin job');
    expect(second.kind).toBe('completed');
    expect((second as Extract<JobOutcome, { kind: 'completed' }>).result.structuredContent).toMatchObject({ sliceCount: 200 });

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
    const outbound = { direction: 'outbound' as const, session: 'S', id: 99, state: 'pending', stop: () => (outboundStops++, true) };
    expect(ex.registry.add(outbound)).toBe(true);
    const outbound7 = { ...outbound, id: 7 };
    expect(ex.registry.add(outbound7)).toBe(true);

    const ignored: CancelResult[] = [
      ex.cancel('S', 12345), // never existed
      ex.cancel('S', 42), // completed: gone
      ex.cancel('T', 7), // other session
      ex.cancel('T', '7'),
      ex.cancel('S', 99), // only an outbound request has it
      ex.cancel('S', '99'),
    ];
    expect(ignored).toEqual(Array(6).fill('unknown'));
    expect(ex.stats().unknownCancelsIgnored).toBe(6);
    expect(outboundStops).toBe(0);
    // (Right after an outcome, p-queue frees its slot a microtask later, so "7" may still be queued.)
    await delay(50);
    expect(numeric.state).toBe('running');
    expect(text.state).toBe('running');

    // "7" is not 7: cancelling the string stops only the string's job, and not our outbound 7.
    expect(ex.cancel('S', '7')).toBe('cancelled-running');
    expect(await within(text.outcome, 10_000, 'job "7"')).toEqual(cancelledRunning);
    expect(numeric.state).toBe('running');
    expect(outboundStops).toBe(0);
    expect(ex.cancel('S', '7')).toBe('unknown');

    expect(ex.cancel('S', 7)).toBe('cancelled-running');
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
    const otherOutbound = { direction: 'outbound' as const, session: 'Y', id: 0, state: 'pending', stop: () => (otherStops++, true) };
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
    const strategies: Strategy[] = ['sync', 'microtasks', 'immediate', 'timer', 'busy', 'busy', 'when-started', 'after-outcome', 'never'];
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
            cancel = ex.cancel(session, id);
            break;
          case 'microtasks':
            for (let k = rnd(50); k > 0; k--) await Promise.resolve();
            cancel = ex.cancel(session, id);
            break;
          case 'immediate':
            await new Promise((resolve) => setImmediate(resolve));
            cancel = ex.cancel(session, id);
            break;
          case 'timer':
            await delay(rnd(3));
            cancel = ex.cancel(session, id);
            break;
          case 'busy': {
            // Block the main thread so the worker can finish and claim meanwhile.
            const until = performance.now() + Math.random() * (tool === 'quick' ? 0.4 : ms + 0.5);
            spinUntil(() => performance.now() >= until, 5);
            cancel = ex.cancel(session, id);
            break;
          }
          case 'when-started':
            while (job.state === 'queued') await new Promise((resolve) => setImmediate(resolve));
            spinUntil(() => false, Math.random() * 0.3);
            cancel = ex.cancel(session, id);
            break;
          case 'after-outcome':
            await within(job.outcome, 30_000, `storm job ${i}`);
            cancel = ex.cancel(session, id);
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
        const sc = (o as Extract<JobOutcome, { kind: 'completed' }>).result.structuredContent as Record<string, unknown>;
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
    console.log(`storm: ${N} jobs in ${(elapsed / 1000).toFixed(1)} s; cancel results ${JSON.stringify(tally)}; completed ${completed}, cancelled ${cancelled}`);
  }, 120_000);
});

// ---- shutdown --------------------------------------------------------------

describe('close', () => {
  it('settles every outcome as cancelled (queued and running) and returns promptly', async () => {
    const ex = await Executor.create({ threads: 1, toolModules: [FIXTURES], graceMs: 5_000 });
    let outboundStops = 0;
    try {
      const { job: running } = await submitRunning(ex, 's', 'r', 'spin', { ms: 30_000 });
      const queued = [ex.submit('s', 'q1', { tool: 'quick', args: {} }), ex.submit('t', 'q2', { tool: 'quick', args: {} })];
      ex.registry.add({ direction: 'outbound', session: 's', id: 'out', state: 'pending', stop: () => (outboundStops++, true) });
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
    ex.cancel('s', 'tight');
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

    expect(ex.cancel('s', 'victim')).toBe('cancelled-queued');
    // Settled at once: it never needed a worker.
    expect(await Promise.race([victim.outcome, new Promise((resolve) => setImmediate(() => resolve('pending')))])).toEqual(cancelledQueued);
    expect(ex.stats().queued).toBe(1);
    expect(ex.registry.get('inbound', 's', 'victim')).toBeUndefined();

    expect(ex.cancel('s', 'blocker')).toBe('cancelled-running');
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
    const waiting = [ex.submit('s', 'w1', { tool: 'quick', args: { tag: 'w1' } }), ex.submit('s', 'w2', { tool: 'quick', args: { tag: 'w2' } })];
    expect(ex.stats().queued).toBe(2);

    const t0 = performance.now();
    const rejected = ex.submit('s', 'w3', { tool: 'quick', args: { tag: 'w3' } });
    const outcome = await Promise.race([rejected.outcome, new Promise((resolve) => setImmediate(() => resolve('pending')))]);
    expect(outcome).toMatchObject({ kind: 'failed', code: 'queue_full' });
    expect(performance.now() - t0).toBeLessThan(100);
    expect(ex.registry.get('inbound', 's', 'w3')).toBeUndefined();
    // Another session is refused too: the limit is global.
    expect((await ex.submit('t', 'w4', { tool: 'quick', args: {} }).outcome).kind).toBe('failed');
    expect(ex.stats().failed).toBe(2);

    // Once room frees up, calls are admitted again.
    expect(ex.cancel('s', 'w1')).toBe('cancelled-queued');
    const admitted = ex.submit('s', 'w5', { tool: 'quick', args: { tag: 'w5' } });
    expect(admitted.state).toBe('queued');
    expect(ex.cancel('s', 'blocker')).toBe('cancelled-running');
    await within(blocker.outcome, 10_000, 'blocker');
    for (const j of [waiting[1]!, admitted]) expect((await within(j.outcome, 10_000, 'queued quick')).kind).toBe('completed');
    expect(ex.stats().inFlight).toBe(0);
  }, 30_000);

  it('a call submitted right after the previous one settled is not refused: the freed thread counts as free', async () => {
    const ex = await make({ threads: 1, queueLimit: 1 });
    for (let i = 0; i < 5; i++) {
      const outcome = await within(ex.submit('s', `seq${i}`, { tool: 'quick', args: {} }).outcome, 10_000, 'sequential quick job');
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

// ---- stops that need more than a checkpoint ---------------------------------

describe('hard stop, deadlines, ctx.signal', () => {
  it('a non-cooperative stage is hard-killed after graceMs, and the pool keeps serving', async () => {
    const ex = await make({ threads: 1, graceMs: 200 });
    const before = await quick(ex);
    const { job } = await submitRunning(ex, 's', 'tight', 'tight', { ms: 60_000, announce: true });
    const t0 = performance.now();
    expect(ex.cancel('s', 'tight')).toBe('cancelled-running');
    const outcome = await within(job.outcome, 10_000, 'hard-killed job');
    const took = performance.now() - t0;
    expect(outcome).toEqual({ kind: 'cancelled', from: 'running', hardKilled: true });
    expect(took).toBeGreaterThanOrEqual(190);
    expect(took).toBeLessThan(5_000);
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

    // Same for spin with cooperative: false.
    const { job: second } = await submitRunning(ex, 's', 'tight-2', 'tight', { ms: 60_000, announce: true });
    expect(ex.cancel('s', 'tight-2')).toBe('cancelled-running');
    expect(await within(second.outcome, 10_000, 'second hard kill')).toMatchObject({ kind: 'cancelled', hardKilled: true });
    expect(ex.stats().hardKilled).toBe(2);
    await quick(ex);
  }, 30_000);

  it('survives many hard stops in a row, each worker replaced while others start up', async () => {
    const ex = await make({ threads: 2, graceMs: 20 });
    const rounds = 24;
    let killed = 0;
    for (let i = 0; i < rounds; i += 2) {
      const jobs = [0, 1].map((k) => ex.submit('hk', `hk${i + k}`, { tool: 'tight', args: { ms: 60_000 } }));
      await delay(5 + (i % 7));
      for (const k of [0, 1]) ex.cancel('hk', `hk${i + k}`);
      for (const j of jobs) {
        const outcome = await within(j.outcome, 10_000, 'hard-stopped job');
        expect(outcome.kind).toBe('cancelled');
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
    const job = ex.submit('s', 'nc', { tool: 'spin', args: { ms: 60_000, cooperative: false } });
    await delay(200); // no progress from a non-cooperative spin: give it time to reach the worker
    expect(job.state).toBe('running');
    expect(ex.cancel('s', 'nc')).toBe('cancelled-running');
    expect(await within(job.outcome, 10_000, 'non-cooperative spin')).toEqual({ kind: 'cancelled', from: 'running', hardKilled: true });
    expect(ex.stats().hardKilled).toBe(1);
    await quick(ex);
  }, 30_000);

  it('a deadline ends the job with timedOut (an error is owed), by tool default or per call', async () => {
    const ex = await make({ threads: 2, graceMs: 300 });
    await warm(ex);
    let t0 = performance.now();
    const slow = await within(ex.submit('s', 1, { tool: 'slow_timeout', args: {} }).outcome, 10_000, 'slow_timeout');
    let took = performance.now() - t0;
    expect(slow).toEqual({ kind: 'timedOut', timeoutMs: 200, hardKilled: false });
    expect(took).toBeGreaterThanOrEqual(190);
    expect(took).toBeLessThan(3_000);

    t0 = performance.now();
    const overridden = await within(ex.submit('s', 2, { tool: 'spin', args: { ms: 30_000 }, timeoutMs: 150 }).outcome, 10_000, 'spin with timeoutMs');
    took = performance.now() - t0;
    expect(overridden).toEqual({ kind: 'timedOut', timeoutMs: 150, hardKilled: false });
    expect(took).toBeGreaterThanOrEqual(140);
    expect(took).toBeLessThan(3_000);

    // The override also loosens: slow_timeout with a longer deadline is still cut, later.
    t0 = performance.now();
    const longer = await within(ex.submit('s', 3, { tool: 'slow_timeout', args: {}, timeoutMs: 600 }).outcome, 10_000, 'slow_timeout 600');
    expect(longer).toEqual({ kind: 'timedOut', timeoutMs: 600, hardKilled: false });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(590);

    // A deadline on a stage that never checks: timed out, then hard-killed after the grace.
    const nc = await within(ex.submit('s', 4, { tool: 'tight', args: { ms: 60_000 }, timeoutMs: 100 }).outcome, 10_000, 'tight with timeoutMs');
    expect(nc).toEqual({ kind: 'timedOut', timeoutMs: 100, hardKilled: true });

    // A cancel after the deadline won is ignored.
    const raced = ex.submit('s', 5, { tool: 'spin', args: { ms: 30_000 }, timeoutMs: 100 });
    expect(raced.state).toBe('running');
    const waitUntil = performance.now() + 5_000;
    while (raced.state === 'running' && performance.now() < waitUntil) await delay(2);
    expect(raced.state).toBe('timedOut');
    const lateCancel = ex.cancel('s', 5);
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
    expect(ex.cancel('s', 'zz')).toBe('cancelled-running');
    const outcome = await within(job.outcome, 15_000, 'sleeping job');
    const took = performance.now() - t0;
    expect(outcome).toEqual(cancelledRunning);
    // Far under both the 60 s sleep and the 10 s grace: the timer was aborted, not the thread.
    expect(took).toBeLessThan(2_000);
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(1);
    const seen = JSON.parse(lines[0]!) as { aborted: boolean; elapsedMs: number; reason: string };
    expect(seen.aborted).toBe(true);
    expect(seen.reason).toBe('StopError');
    expect(seen.elapsedMs).toBeLessThan(60_000);
    expect((await quick(ex)).threadId).toBe(before.threadId);
    expect(ex.stats().hardKilled).toBe(0);

    // Control: uncancelled, the same stage sleeps to the end and reports no abort.
    const plain = await within(ex.submit('s', 'zz2', { tool: 'sleep', args: { ms: 20 } }).outcome, 10_000, 'short sleep');
    expect(plain.kind).toBe('completed');
    expect((plain as Extract<JobOutcome, { kind: 'completed' }>).result.content[0]).toMatchObject({ type: 'text' });
    expect(JSON.parse((plain as { result: { content: { text: string }[] } }).result.content[0]!.text)).toMatchObject({ aborted: false });
  }, 30_000);
});

// ---- failures ----------------------------------------------------------------

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
    const fn = await within(ex.submit('s', 1, { tool: 'unclonable', args: { kind: 'function' } }).outcome, 10_000, 'unclonable function');
    expect(fn).toMatchObject({ kind: 'failed', code: 'stage' });
    expect((fn as { message: string }).message).toMatch(/callback is a function/);
    const inst = await within(ex.submit('s', 2, { tool: 'unclonable', args: { kind: 'instance' } }).outcome, 10_000, 'unclonable instance');
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
    expect(await ex.submit('s', 5, { tool: 'no_such_tool', args: {} }).outcome).toMatchObject({ kind: 'failed', code: 'unknown_tool' });
    expect(ex.stats().inFlight).toBe(0);
    expect(ex.stats().failed).toBe(5);
    // Validation is on the main thread: the crash tool never ran, the thread is intact.
    await quick(ex);
    expect(ex.stats().threads).toBe(ex.threads + ex.spareThreads);
  }, 30_000);
});
