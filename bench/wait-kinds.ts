/**
 * Cancel → stopped and cancel → slot reused, per kind of work, against the
 * naive way, in the same run: each example tool of examples/tools/ against
 * its baseline (bench/tools/naive.ts), alternating sample by sample, on one
 * worker thread with no standby (so the next call waits for that thread).
 *
 * Per sample: the tool is started, its first progress report says it is in
 * the part under test, a zero-work `spin` call is queued behind it, and the
 * tool is cancelled. cancel → stopped: the cancel call to the stopped call's
 * outcome (its worker returned, or was terminated and replaced). cancel →
 * slot reused: the cancel call to the queued call starting on the thread.
 * For gzip also: cancel → the gzip process gone (the naive one runs to its
 * end, after the hard stop ended its worker).
 *
 *   node dist-dev/bench/wait-kinds.js --quick      # 5 samples per row (CI), else 20
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Executor } from '#dist/src/executor/executor.js';
import { JOB_EVENTS, type JobEvent } from '#dist/src/executor/events.js';
import { summarize } from '#dist/src/probe/stats.js';

const quick = process.argv.includes('--quick');
const SAMPLES = quick ? 5 : 20;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'wait-kinds-'));
writeFileSync(join(scratch, 'big.bin'), randomBytes(32 * 1024 * 1024));
// Under the repo's root for the type-checks (src/), under scratch for the file tools: two roots, two pools.
const tools = [new URL('../examples/tools/index.js', import.meta.url), new URL('./tools/naive.js', import.meta.url)];
const open = (root: string) =>
  Executor.create({ toolModules: tools, threads: 1, spareThreads: 0, toolSettings: { root } });
const repo = await open(ROOT);
const files = await open(scratch);

/** A kind of work: ours and the naive way. */
const ROWS: { kind: string; ex: Executor; ours: [string, object]; naive: [string, object] }[] = [
  {
    kind: 'WebAssembly loop',
    ex: repo,
    ours: ['wasm_primes', { below: 2_000_000_000, checkEvery: 1000 }],
    naive: ['wasm_primes', { below: 2_000_000_000, checkEvery: 0 }],
  },
  {
    kind: 'TypeScript type-check of src/',
    ex: repo,
    ours: ['typecheck', { dir: 'src' }],
    naive: ['naive_typecheck', { dir: 'src' }],
  },
  {
    kind: 'gzip -9 of 32 MiB (child process)',
    ex: files,
    ours: ['gzip_file', { path: 'big.bin' }],
    naive: ['naive_gzip', { path: 'big.bin' }],
  },
];

let id = 0;
const startedAt = new Map<object, number>();
JOB_EVENTS.subscribe((message) => {
  const e = message as JobEvent;
  if (e.type === 'running') startedAt.set(e.job, performance.now());
});

/** Of these pids, how many are still alive. */
const gzipAlive = (pids: Set<number>) => [...pids].filter((pid) => existsSync(`/proc/${pid}`)).length;

async function sample(ex: Executor, tool: string, args: object) {
  const key = `s${++id}`;
  let progressed!: () => void;
  const inPart = new Promise<void>((resolve) => (progressed = resolve));
  const job = ex.submit('bench', key, { tool, args: args, onProgress: () => progressed() });
  await inPart;
  const before = new Set(gzipPids());
  const next = ex.submit('bench', `n${id}`, { tool: 'spin', args: { ms: 0 } });
  const t0 = performance.now();
  ex.tryCancel('bench', key);
  await job.outcome;
  const stopped = performance.now() - t0;
  await next.outcome;
  const reused = startedAt.get(next)! - t0;
  let gone: number | undefined;
  if (before.size > 0) {
    while (gzipAlive(before) > 0) await delay(5);
    gone = performance.now() - t0;
  }
  return { stopped, reused, gone };
}

/** This process's gzip children (the pool runs in this process, so every tool's child is ours). */
function gzipPids(): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return stat.includes('(gzip)') && ppid === process.pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

const fmt = (xs: number[]) => {
  const s = summarize(xs);
  return `${s.p50.toFixed(1)} / ${s.p99.toFixed(1)}`;
};
process.stdout.write(
  `| kind of work | way | cancel → stopped p50 / p99 ms | cancel → slot reused p50 / p99 ms | cancel → child gone p50 / p99 ms |\n|---|---|---|---|---|\n`,
);
for (const row of ROWS) {
  const got = { ours: [] as Awaited<ReturnType<typeof sample>>[], naive: [] as Awaited<ReturnType<typeof sample>>[] };
  for (let i = 0; i < SAMPLES; i++)
    for (const way of i % 2 === 0 ? (['ours', 'naive'] as const) : (['naive', 'ours'] as const))
      got[way].push(await sample(row.ex, ...row[way]));
  for (const way of ['ours', 'naive'] as const) {
    const xs = got[way];
    const gone = xs.map((x) => x.gone).filter((x): x is number => x !== undefined);
    process.stdout.write(
      `| ${row.kind} | ${way === 'ours' ? row.ours[0] : `naive (${row.naive[0]})`} | ${fmt(xs.map((x) => x.stopped))} | ${fmt(xs.map((x) => x.reused))} | ${gone.length ? fmt(gone) : '-'} |\n`,
    );
  }
}
await Promise.all([repo.close(), files.close()]);
rmSync(scratch, { recursive: true, force: true });
