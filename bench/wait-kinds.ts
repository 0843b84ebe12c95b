/**
 * Cancel → stopped and cancel → slot reused, per kind of work, against the
 * naive way, in the same run, alternating sample by sample, on one worker
 * thread with no standby (so the next call waits for that thread).
 *
 * - WebAssembly and the TypeScript type-check: each example tool of
 *   examples/tools/ against its baseline on the same pool (bench/tools/naive.ts:
 *   no check, so only the hard stop ends it).
 * - A program (`dd | gzip -9 | wc` of 32 MiB): gzip_file through `ctx.spawn`
 *   against two naive ways on a plain Piscina pool of one thread
 *   (bench/baselines/naive-child-worker.ts): the cancel ignored (Piscina's abort
 *   terminates the thread), and `execFile` with an AbortSignal (Node kills the
 *   shell only). Also cancel → the last process of the pipeline gone.
 *
 * Per sample: the work is started, and is in the part under test (its first
 * progress report; for the pipeline, gzip running), a zero-work call is queued
 * behind it, and the work is cancelled. cancel → stopped: the cancel to the
 * stopped call's outcome. cancel → slot reused: the cancel to the queued call
 * starting on the thread.
 *
 *   node dist-dev/bench/wait-kinds.js --quick      # 5 samples per row, else 20
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { Executor } from '#dist/src/executor/executor.js';
import { JOB_EVENTS, type JobEvent } from '#dist/src/executor/events.js';
import { summarize } from '#dist/src/probe/stats.js';
import type { NaiveChildTask } from './baselines/naive-child-worker.js';

const quick = process.argv.includes('--quick');
const SAMPLES = quick ? 5 : 20;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'wait-kinds-'));
const BIG = join(scratch, 'big.bin');
writeFileSync(BIG, randomBytes(32 * 1024 * 1024));
// Under the repo's root for the type-checks (src/), under scratch for the file tools: two roots, two pools.
const tools = [new URL('../examples/tools/index.js', import.meta.url), new URL('./tools/naive.js', import.meta.url)];
const open = (root: string) =>
  Executor.create({ toolModules: tools, threads: 1, spareThreads: 0, toolSettings: { root } });
const repo = await open(ROOT);
const files = await open(scratch);
const piscina = new Piscina<NaiveChildTask, number>({
  filename: new URL('./baselines/naive-child-worker.js', import.meta.url).href,
  minThreads: 1,
  maxThreads: 1,
  idleTimeout: Number.POSITIVE_INFINITY,
});
piscina.on('error', () => {}); // a terminated thread's error is the abort's doing

/** One sample of a way, started: in the part under test once `inPart` resolves. */
interface Started {
  readonly inPart: Promise<void>;
  readonly outcome: Promise<unknown>;
  cancel(): void;
  /** Queues a zero-work call behind it; resolves to when that call started (performance.now()). */
  queueNext(): Promise<number>;
  /** For work that runs programs: what every process of this sample has in its environment. */
  readonly mark?: string;
}

/** A kind of work and its ways: ours first. */
interface Row {
  readonly kind: string;
  readonly ways: readonly { readonly label: string; readonly start: () => Started }[];
}

let id = 0;
const startedAt = new Map<object, number>();
JOB_EVENTS.subscribe((message) => {
  const e = message as JobEvent;
  if (e.type === 'running') startedAt.set(e.job, performance.now());
});

/** Processes (not zombies) with `mark` in their environment. */
function marked(mark: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (
        !readFileSync(`/proc/${entry}/environ`, 'latin1')
          .split('\0')
          .some((v) => v.startsWith(mark))
      )
        continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z')
        found.push(stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')));
    } catch {
      /* gone while we looked, or not ours */
    }
  }
  return found;
}

async function gzipRunning(mark: string): Promise<void> {
  while (!marked(mark).includes('gzip')) await delay(2);
}

/** A call on one of our pools. `mark`: it runs programs (the child guard marks each with the pool's pid). */
function ours(ex: Executor, tool: string, args: object, runsPrograms = false): () => Started {
  return () => {
    const key = `s${++id}`;
    let progressed!: () => void;
    const progress = new Promise<void>((resolve) => (progressed = resolve));
    const mark = runsPrograms ? `MCP_CANCEL_POOL_CHILD_CELL=${process.pid}.` : undefined;
    const job = ex.submit('bench', key, { tool, args, onProgress: () => progressed() });
    return {
      inPart: mark ? progress.then(() => gzipRunning(mark)) : progress,
      outcome: job.outcome,
      cancel: () => ex.tryCancel('bench', key),
      queueNext: async () => {
        const next = ex.submit('bench', `n${id}`, { tool: 'spin', args: { ms: 0 } });
        await next.outcome;
        return startedAt.get(next)!;
      },
      mark,
    };
  };
}

/** The pipeline on the plain Piscina pool, the naive way `way`. */
function naive(way: 'ignore' | 'kill-direct'): () => Started {
  return () => {
    const mark = `WAIT_KINDS_MARK=${++id}`;
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', WAIT_KINDS_MARK: String(id) };
    const stamp = () => piscina.run({ way: 'stamp' }).then((at) => at - performance.timeOrigin);
    if (way === 'ignore') {
      const controller = new AbortController();
      return {
        inPart: gzipRunning(mark),
        outcome: piscina.run({ way, file: BIG, env }, { signal: controller.signal }).catch(() => undefined),
        cancel: () => controller.abort(),
        queueNext: stamp,
        mark,
      };
    }
    const { port1, port2 } = new MessageChannel();
    const outcome = piscina.run({ way, file: BIG, env, port: port2 }, { transferList: [port2] });
    void outcome.finally(() => port1.close());
    return { inPart: gzipRunning(mark), outcome, cancel: () => port1.postMessage('abort'), queueNext: stamp, mark };
  };
}

const ROWS: Row[] = [
  {
    kind: 'WebAssembly loop',
    ways: [
      { label: 'wasm_primes', start: ours(repo, 'wasm_primes', { below: 2_000_000_000, checkEvery: 1000 }) },
      {
        label: 'naive (no check: the hard stop)',
        start: ours(repo, 'wasm_primes', { below: 2_000_000_000, checkEvery: 0 }),
      },
    ],
  },
  {
    kind: 'TypeScript type-check of src/',
    ways: [
      { label: 'typecheck', start: ours(repo, 'typecheck', { dir: 'src' }) },
      { label: 'naive (no CancellationToken: the hard stop)', start: ours(repo, 'naive_typecheck', { dir: 'src' }) },
    ],
  },
  {
    kind: 'dd, gzip -9 and wc in a pipeline, 32 MiB (programs)',
    ways: [
      { label: 'gzip_file (ctx.spawn)', start: ours(files, 'gzip_file', { path: 'big.bin' }, true) },
      { label: 'naive: Piscina abort, the cancel ignored', start: naive('ignore') },
      { label: 'naive: execFile with a signal (kills the shell)', start: naive('kill-direct') },
    ],
  },
];

async function sample(start: () => Started) {
  const run = start();
  await run.inPart;
  const next = run.queueNext();
  const t0 = performance.now();
  run.cancel();
  await run.outcome;
  const stopped = performance.now() - t0;
  const reused = (await next) - t0;
  let gone: number | undefined;
  if (run.mark !== undefined) {
    while (marked(run.mark).length > 0) await delay(5);
    gone = performance.now() - t0;
  }
  return { stopped, reused, gone };
}

const fmt = (xs: number[]) => {
  const s = summarize(xs);
  return `${s.p50.toFixed(1)} / ${s.p99.toFixed(1)}`;
};
process.stdout.write(
  `| kind of work | way | cancel → stopped p50 / p99 ms | cancel → slot reused p50 / p99 ms | cancel → last process gone p50 / p99 ms |\n|---|---|---|---|---|\n`,
);
for (const row of ROWS) {
  const got = row.ways.map(() => [] as Awaited<ReturnType<typeof sample>>[]);
  // Each round runs every way once, in an order that rotates, so drift reaches each way alike.
  for (let i = 0; i < SAMPLES; i++)
    for (let k = 0; k < row.ways.length; k++) {
      const w = (i + k) % row.ways.length;
      got[w]!.push(await sample(row.ways[w]!.start));
    }
  row.ways.forEach((way, w) => {
    const xs = got[w]!;
    const gone = xs.map((x) => x.gone).filter((x): x is number => x !== undefined);
    process.stdout.write(
      `| ${row.kind} | ${way.label} | ${fmt(xs.map((x) => x.stopped))} | ${fmt(xs.map((x) => x.reused))} | ${gone.length ? fmt(gone) : '-'} |\n`,
    );
  });
}
await Promise.all([repo.close(), files.close(), piscina.close({ force: true })]);
rmSync(scratch, { recursive: true, force: true });
