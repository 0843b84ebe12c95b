/**
 * Shared helpers of the executor tests (test/executor-*.test.ts): they run
 * against the real Piscina pool, through the compiled code.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect } from 'vitest';
import { Executor, type ExecutorOptions, type JobOutcome } from '../dist/src/index.js';

export const FIXTURES = new URL('../dist-dev/test/fixtures/failing-tools.js', import.meta.url);

const open: Executor[] = [];
export async function make(options: ExecutorOptions = {}): Promise<Executor> {
  const ex = await Executor.create({ toolModules: [FIXTURES], ...options });
  open.push(ex);
  return ex;
}
/** Closes every executor `make` opened, after each test; call once at the top of each test file. */
export function closeExecutorsAfterEach(): void {
  afterEach(async () => {
    await Promise.all(open.splice(0).map((ex) => ex.close()));
  }, 30_000);
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
}

export const scratch = mkdtempSync(join(tmpdir(), 'executor-test-'));

/** A bound on a hang, not a timing: a loaded machine may take this long to start a worker and load a tool module. */
const HANG_MS = 60_000;

/** Rejects instead of hanging: every await on the pool goes through this. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
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
export const freshId = () => nextId++;

export interface QuickInfo {
  echo: { tag?: string | number };
  threadId: number;
  at: number;
  loadedAt: number;
}

/** Runs `quick` and returns what it saw in the worker, plus how long the round trip took. */
export async function quick(ex: Executor, session = 'probe'): Promise<QuickInfo & { ms: number }> {
  const t0 = performance.now();
  const tag = `q${freshId()}`;
  const outcome = await within(ex.submit(session, tag, { tool: 'quick', args: { tag } }).outcome, HANG_MS, 'quick job');
  const ms = performance.now() - t0;
  expect(outcome.kind).toBe('completed');
  const info = (outcome as Extract<JobOutcome, { kind: 'completed' }>).result.structuredContent as QuickInfo;
  expect(info.echo.tag).toBe(tag);
  return { ...info, ms };
}

/**
 * Waits until every worker thread has booted, by running one short async job
 * per thread at once. Deadlines and grace timers start when a job is handed to
 * the pool, so a cold worker's boot time would otherwise count against them.
 */
export async function warm(ex: Executor): Promise<void> {
  const jobs = Array.from({ length: ex.threads }, (_, i) =>
    ex.submit('warm', `w${freshId()}-${i}`, { tool: 'sleep', args: { ms: 30 } }),
  );
  for (const j of jobs) expect((await within(j.outcome, HANG_MS, 'warm-up')).kind).toBe('completed');
}

/** Submits a job whose tool reports progress once it is really executing in a worker; resolves when it does. */
export async function submitRunning(
  ex: Executor,
  session: string,
  id: string | number,
  tool: string,
  args: Record<string, unknown>,
  extra: { timeoutMs?: number } = {},
) {
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
  await within(started, HANG_MS, `${tool} reaching a worker`);
  return { job, reports: () => reports };
}

/** Busy-waits on the main thread (no event loop turns), up to `limitMs`, until `done()`. */
export function spinUntil(done: () => boolean, limitMs: number): boolean {
  const end = performance.now() + limitMs;
  while (performance.now() < end) if (done()) return true;
  return done();
}

export const cancelledRunning = { kind: 'cancelled', from: 'running', hardKilled: false } as const;
export const cancelledQueued = { kind: 'cancelled', from: 'queued', hardKilled: false } as const;
