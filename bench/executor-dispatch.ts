/**
 * What the way a waiting job reaches a worker costs the worker threads, with
 * the worker code held equal. Zero-work `spin` jobs, a closed loop of
 * `inFlight`, two worker threads, the whole process on one core (as the
 * pinned overhead scenarios put a server), alternating round by round:
 *
 * - `executor`: ours' {@link Executor}. Before the twelfth pass, admission
 *   kept Piscina's own queue empty and started a waiting job in the microtask
 *   after Piscina's result handler; since, its wait list is Piscina's queue.
 * - `piscina-queue`: Piscina fed directly with the same worker runtime and the
 *   same task shape (a live state word per task), its own queue holding what
 *   waits. Piscina posts the next task inside its result handler, and its sweep
 *   of the worker ports then often finds that task's result already there.
 *
 * Per job it prints the CPU of the main thread, of the pool's worker threads
 * and of the rest (V8's and libuv's helpers), from /proc/self/task, and the
 * share of jobs the busier worker ran. BENCHMARKS.md (twelfth pass on issue
 * 24) reads it: the worker runtime is the same on both sides, so a difference
 * in the workers' CPU is the dispatch pattern's. The executor's main thread
 * also keeps the registry, the job and its outcome, which the other side does not.
 *
 *   npx tsc -p . && node dist-dev/bench/executor-dispatch.js [jobsPerRound=100000] [inFlight=32] [rounds=3]
 *
 * No targets of its own; Linux only (/proc). Pins itself with `taskset` when there is one.
 */
import { readdirSync } from 'node:fs';
import { threadId } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { Executor } from '#dist/src/executor/executor.js';
import type { WorkerInit, WorkerOutcome, WorkerTask } from '#dist/src/pool/protocol.js';
import { JobState, packSlot, StateSlab } from '#dist/src/state/job-state.js';
import { ChildCells } from '#dist/src/state/child-cells.js';
import { median } from '#dist/src/probe/stats.js';
import { statCpuMs } from '#dist/src/probe/cpu.js';
import { pinSelf } from './lib/raw-client.js';

const JOBS = Number(process.argv[2] ?? 100_000);
const IN_FLIGHT = Number(process.argv[3] ?? 32);
const ROUNDS = Number(process.argv[4] ?? 3);
const THREADS = 2;
const CPU = '1';
const ARGS = { ms: 0, stageMs: 1, cooperative: true } as const;

/** CPU ms of every thread of this process, by thread id. */
function threadCpu(): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      out.set(Number(tid), statCpuMs(`/proc/self/task/${tid}/stat`));
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

/** A side of the comparison: starts its pool, runs one zero-work job, and closes. */
interface Side {
  readonly name: string;
  start(): Promise<void>;
  job(): Promise<void>;
  /** Jobs per worker thread id since the last call, where the side can tell. */
  split(): number[] | undefined;
  close(): Promise<void>;
}

function executorSide(): Side {
  let executor: Executor | undefined;
  let id = 0;
  return {
    name: 'executor',
    async start() {
      executor = await Executor.create({ threads: THREADS });
    },
    async job() {
      const outcome = await executor!.submit('bench', ++id, { tool: 'spin', args: ARGS }).outcome;
      if (outcome.kind !== 'completed') throw new Error(`executor: ${JSON.stringify(outcome)}`);
    },
    split: () => undefined,
    close: () => executor!.close(),
  };
}

function piscinaQueueSide(): Side {
  const slab = new StateSlab(4096);
  const byThread = new Map<number, number>();
  let pool: Piscina<WorkerTask, WorkerOutcome> | undefined;
  const init: WorkerInit = {
    stateBuffer: slab.buffer,
    childBuffer: new ChildCells(slab.capacity).buffer,
    graceMs: 500,
    toolModules: [import.meta.resolve('#dist/workers/tools/index.js')],
    settings: {},
    progressIntervalMs: 50,
    toolPriority: 'normal',
  };
  return {
    name: 'piscina-queue',
    async start() {
      pool = new Piscina({
        filename: import.meta.resolve('#dist/workers/runtime.js'),
        minThreads: THREADS,
        maxThreads: THREADS,
        concurrentTasksPerWorker: 1,
        idleTimeout: Number.POSITIVE_INFINITY,
        workerData: init,
      });
      await Promise.all(Array.from({ length: THREADS }, () => pool!.run({} as WorkerTask, { name: 'warmup' })));
    },
    async job() {
      const ref = slab.allocate();
      // The executor moves a job to running as it hands it to Piscina; here Piscina's queue holds it running.
      slab.transition(ref, JobState.queued, JobState.running);
      // What the executor sends for a call nobody listens to (no port, no progress, logs off).
      const outcome = await pool!.run({
        tool: 'spin',
        args: ARGS,
        slot: packSlot(ref, slab.capacity),
        minLogSeverity: 1000,
      });
      const thread = slab.threadOf(ref);
      byThread.set(thread, (byThread.get(thread) ?? 0) + 1);
      slab.release(ref);
      if (!('content' in outcome)) throw new Error(`piscina-queue: ${JSON.stringify(outcome)}`);
    },
    split() {
      const counts = [...byThread.values()];
      byThread.clear();
      return counts;
    },
    close: () => pool!.destroy(),
  };
}

async function closedLoop(side: Side, jobs: number, inFlight: number): Promise<number> {
  let left = jobs;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (left-- > 0) await side.job();
    }),
  );
  return performance.now() - t0;
}

interface Row {
  readonly side: string;
  readonly jobsPerSecond: number;
  readonly mainUs: number;
  readonly workersUs: number;
  readonly otherUs: number;
  readonly busierShare: number | undefined;
}

async function round(side: Side): Promise<Row> {
  const before = new Set(threadCpu().keys());
  await side.start();
  const workers = [...threadCpu().keys()].filter((tid) => !before.has(tid));
  await closedLoop(side, Math.min(JOBS, 20_000), IN_FLIGHT); // warm-up: JIT and heap
  side.split();
  const a = threadCpu();
  const ms = await closedLoop(side, JOBS, IN_FLIGHT);
  const b = threadCpu();
  const split = side.split();
  await side.close();
  const used = (tid: number) => (b.get(tid) ?? 0) - (a.get(tid) ?? 0);
  const perJob = (msTotal: number) => Math.round((msTotal * 10_000) / JOBS) / 10;
  const main = used(process.pid);
  const inWorkers = workers.reduce((sum, tid) => sum + used(tid), 0);
  const all = [...b.keys()].reduce((sum, tid) => sum + used(tid), 0);
  return {
    side: side.name,
    jobsPerSecond: Math.round(JOBS / (ms / 1000)),
    mainUs: perJob(main),
    workersUs: perJob(inWorkers),
    otherUs: perJob(all - main - inWorkers),
    busierShare: split && split.length > 0 ? Math.round((100 * Math.max(...split)) / JOBS) / 100 : undefined,
  };
}

async function main(): Promise<void> {
  if (threadId !== 0 || !process.platform.startsWith('linux')) throw new Error('run on Linux, as a main thread');
  const pinned = (await pinSelf(CPU)) !== undefined;
  process.stdout.write(
    `executor-dispatch: ${JOBS} zero-work jobs per round, ${IN_FLIGHT} in flight, ${THREADS} threads, ${pinned ? `pinned to CPU ${CPU}` : 'unpinned (no taskset)'}\n`,
  );
  process.stdout.write('side            jobs/s   µs CPU per job: main  workers  other   busier worker\n');
  const rows: Row[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const sides = r % 2 === 0 ? [executorSide(), piscinaQueueSide()] : [piscinaQueueSide(), executorSide()];
    for (const side of sides) {
      const row = await round(side);
      rows.push(row);
      const share = row.busierShare === undefined ? '–' : row.busierShare.toFixed(2);
      process.stdout.write(
        `${row.side.padEnd(14)} ${String(row.jobsPerSecond).padStart(7)} ${row.mainUs.toFixed(1).padStart(23)} ${row.workersUs.toFixed(1).padStart(8)} ${row.otherUs.toFixed(1).padStart(6)}   ${share}\n`,
      );
    }
  }
  const med = (side: string, key: 'mainUs' | 'workersUs' | 'otherUs') =>
    median(rows.filter((x) => x.side === side).map((x) => x[key]));
  process.stdout.write(
    `medians, executor ÷ piscina-queue: main ${(med('executor', 'mainUs') / med('piscina-queue', 'mainUs')).toFixed(2)}×, workers ${(med('executor', 'workersUs') / med('piscina-queue', 'workersUs')).toFixed(2)}×\n`,
  );
}

await main();
