/**
 * What measuring the checkpoint gap costs: two executors in one process, one
 * with `checkpointGaps: true` (the default) and one with `false`, run the
 * same work in interleaved rounds (ABBA order, so drift in the machine's load
 * falls on both alike):
 *
 * - a loop of `--n` (default 10⁸) `ctx.checkpoint()` calls and nothing else,
 *   timed on its worker thread (no dispatch in the figure);
 * - `--calls` sequential zero-work `spin` calls (`ms: 0`), timed from submit
 *   to outcome on the main thread.
 *
 * The figures are CPU time (the loop's on its worker thread, the calls' over
 * the whole process, every thread included), since on a shared machine wall
 * time mostly measures the wait for a core; wall times are printed beside.
 * Each side runs in a fresh process of its own. Each round gives one on/off ratio per workload; the verdict is the median
 * ratio, which issue 61 bounds at 1.02. `--out` writes the rounds' ratios, and
 * `--pool` reads several such files and gives the median over all their
 * rounds (runs made minutes apart, so one noisy minute does not decide):
 *
 *   node dist-dev/bench/checkpoint-overhead.js --quick --out /tmp/g1.json
 *   node dist-dev/bench/checkpoint-overhead.js --pool /tmp/g1.json /tmp/g2.json /tmp/g3.json
 *
 * Bounded: `--quick` is 6 rounds of 10⁸ checks and 300 calls per side (about
 * 20 s); the default 10 rounds and 1000 calls. `--aa` runs off against off:
 * the bench's own noise floor.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { Executor } from '#dist/src/executor/executor.js';
import { median } from '#dist/src/probe/stats.js';

const TOOLS = new URL('./tools/checkpoints.js', import.meta.url);

/** One run's ratios (on / off), a round each. */
interface Rounds {
  readonly checkpointRatios: number[];
  readonly spinRatios: number[];
  readonly loadavg: number;
}

const BOUND = 1.02;
const execFileP = promisify(execFile);

const { values, positionals } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    n: { type: 'string' },
    calls: { type: 'string' },
    rounds: { type: 'string' },
    out: { type: 'string' },
    pool: { type: 'boolean', default: false },
    aa: { type: 'boolean', default: false },
    side: { type: 'string' },
  },
  allowPositionals: true,
});

if (values.pool) {
  const runs = positionals.map((file) => JSON.parse(readFileSync(file, 'utf8')) as Rounds);
  report(
    runs.flatMap((r) => r.checkpointRatios),
    runs.flatMap((r) => r.spinRatios),
    `${runs.length} pooled runs`,
  );
} else if (values.side) {
  process.stdout.write(JSON.stringify(await side(values.side === 'on')) + '\n');
} else {
  const n = values.n ?? '1e8';
  const calls = values.calls ?? (values.quick ? '300' : '1000');
  const rounds = Number(values.rounds ?? (values.quick ? 6 : 10));
  const out: Rounds = { checkpointRatios: [], spinRatios: [], loadavg: loadavg()[0]! };
  for (let r = 0; r < rounds; r++) {
    // ABBA: which side goes first alternates, so a trend in the machine's load falls on both alike.
    const order: ('on' | 'off')[] = r % 2 === 0 ? ['on', 'off'] : ['off', 'on'];
    const got: Partial<Record<'on' | 'off', Side>> = {};
    for (const which of order) got[which] = await run(values.aa && which === 'on' ? 'off' : which, n, calls);
    const { on, off } = got as Record<'on' | 'off', Side>;
    out.checkpointRatios.push(on.checkMs / off.checkMs);
    out.spinRatios.push(on.spinUs / off.spinUs);
    process.stderr.write(
      `round ${r + 1}/${rounds}: ${Number(n).toExponential(0)} checks CPU on ${on.checkMs.toFixed(1)} ms, off ${off.checkMs.toFixed(1)} ms ` +
        `(wall ${on.checkWallMs.toFixed(1)}, ${off.checkWallMs.toFixed(1)}); spin call CPU on ${on.spinUs.toFixed(1)} µs, off ${off.spinUs.toFixed(1)} µs ` +
        `(wall ${on.spinWallUs.toFixed(1)}, ${off.spinWallUs.toFixed(1)})\n`,
    );
  }
  if (values.out) writeFileSync(values.out, JSON.stringify(out));
  report(
    out.checkpointRatios,
    out.spinRatios,
    `1 run${values.aa ? ' (A/A: off against off)' : ''}, load ${out.loadavg.toFixed(1)}`,
  );
}

/** One side's figures, from its own process. */
interface Side {
  /** The loop's CPU time on its worker thread, and its wall time. */
  readonly checkMs: number;
  readonly checkWallMs: number;
  /** The process's CPU time per zero-work call (every thread: main, worker, ticker), and the wall time per call. */
  readonly spinUs: number;
  readonly spinWallUs: number;
}

/** Runs one side in a fresh process (two executors in one process are not alike: an A/A run differed by 25 %). */
async function run(which: 'on' | 'off', n: string, calls: string): Promise<Side> {
  const { stdout } = await execFileP(process.execPath, [
    fileURLToPath(import.meta.url),
    '--side',
    which,
    '--n',
    n,
    '--calls',
    calls,
  ]);
  return JSON.parse(stdout) as Side;
}

/** In the child: one executor, warmed, then the checks loop and the zero-work calls. */
async function side(gaps: boolean): Promise<Side> {
  const n = Number(values.n);
  const calls = Number(values.calls);
  const ex = await Executor.create({ toolModules: [TOOLS], threads: 1, spareThreads: 0, checkpointGaps: gaps });
  let id = 0;
  const result = async (tool: string, args: Record<string, unknown>) => {
    const outcome = await ex.submit('bench', ++id, { tool, args }).outcome;
    if (outcome.kind !== 'completed') throw new Error(`${tool}: ${outcome.kind}`);
    return outcome.result;
  };
  const loop = async (count: number) => {
    const first = (await result('checkpoints', { n: count })).content[0];
    return first?.type === 'text' ? (JSON.parse(first.text) as { ms: number; cpuMs: number }) : undefined;
  };
  // Warm: the JIT has compiled the loop and the call path before anything is measured.
  await loop(Math.min(n, 1e7));
  for (let i = 0; i < 100; i++) await result('spin', { ms: 0 });
  const measured = await loop(n);
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (let i = 0; i < calls; i++) await result('spin', { ms: 0 });
  const cpu = process.cpuUsage(c0);
  const spinWallUs = ((performance.now() - t0) * 1000) / calls;
  await ex.close();
  return {
    checkMs: measured?.cpuMs ?? Number.NaN,
    checkWallMs: measured?.ms ?? Number.NaN,
    spinUs: (cpu.user + cpu.system) / calls,
    spinWallUs,
  };
}

function report(checks: number[], spins: number[], what: string): void {
  const row = (name: string, xs: number[]) => {
    const m = median(xs);
    return `${name}: median on/off ${m.toFixed(4)} over ${xs.length} rounds (min ${Math.min(...xs).toFixed(4)}, max ${Math.max(...xs).toFixed(4)}) ${m <= BOUND ? 'ok' : 'OVER'} (bound ${BOUND})`;
  };
  process.stdout.write(
    `checkpoint-gap overhead, ${what}\n${row('10^8 ctx.checkpoint(), worker CPU', checks)}\n${row('zero-work spin call, process CPU', spins)}\n`,
  );
}
