/**
 * The worker pool: Piscina running workers/runtime.js. A cooperative stop
 * never touches the thread; only the hard stop (grace expired) terminates the
 * one worker that runs the stuck job, and Piscina replaces it.
 */
import { Piscina, type PiscinaTask, type TaskQueue } from 'piscina';
import type { ResourceLimits } from 'node:worker_threads';
import { workerExecArgv } from './worker-exec-argv.js';
import type { WarmupReport, WorkerInit, WorkerOutcome, WorkerTask } from './protocol.js';

/**
 * Piscina loads a worker file with require() first. On Node versions where
 * require() of ES modules is on, that path has aborted whole processes with a
 * native assertion (CreateRequiredModuleFacade) while workers were being
 * replaced; turning it off in the workers makes Piscina fall back to import().
 */
const WORKER_EXEC_ARGV = workerExecArgv(
  process.execArgv,
  process.allowedNodeEnvironmentFlags.has('--experimental-require-module') ? ['--no-experimental-require-module'] : [],
);

/** Where the compiled worker runtime lives, relative to this compiled file. */
const RUNTIME = new URL('../../workers/runtime.js', import.meta.url).href;

/** How a pool run ended, from the main thread's point of view. */
export type PoolOutcome =
  | WorkerOutcome
  /** The worker died under the job: crash, out of memory, or a hard stop. */
  | { readonly kind: 'crashed'; readonly message: string };

/** Told how a pool run ended. An object with a method, not a closure: the job itself. */
export interface PoolCallback {
  poolDone(outcome: PoolOutcome): void;
}

/** The main pool's wait list (Piscina's `taskQueue`), told which task the balancer gives a thread. */
export interface WaitQueue extends TaskQueue {
  /** The balancer gives `task` a thread: it leaves the queue (if it was in it) and starts. */
  handedOut(task: PiscinaTask): void;
}

export interface WorkerPoolOptions {
  /** Threads for the jobs admission starts. */
  readonly threads: number;
  /** Standby threads: they run a job only while a stopped job still holds one of the others. */
  readonly spareThreads: number;
  readonly init: WorkerInit;
  readonly resourceLimits?: ResourceLimits;
  /** Where the main pool's tasks wait for a thread; Piscina's own FIFO without it. */
  readonly waitQueue?: WaitQueue;
}

/** Piscina's run options for a task without a port: one shared object. */
const NO_TRANSFER = {};

/** Piscina's balancer policy (its type is not exported by name). */
type Balancer = NonNullable<NonNullable<ConstructorParameters<typeof Piscina>[0]>['loadBalancer']>;

type Pool = Piscina<WorkerTask | Record<string, never>, WorkerOutcome | WarmupReport>;

/**
 * Two Piscina pools: the `threads` that run admitted jobs, and the standby.
 * Piscina looks at every thread it has on each run() (an interface object per
 * thread for its balancer), and spreads work over idle threads so each sleeps
 * longer between jobs; a standby thread in its own pool is seen only when a
 * job goes to it.
 */
export class WorkerPool {
  private readonly main: Pool;
  private readonly standby: Pool | undefined;
  private readonly mainThreads: number;
  /** Threads a hard stop is terminating, until they exit. */
  private readonly dying = new Set<number>();
  /**
   * Piscina's least-busy choice (with one task per thread: the first idle
   * one), skipping a thread being terminated. Piscina learns of the end only
   * at its 'exit'; meanwhile the stopped job's own result can still arrive
   * (it returned as the stop was sent), the thread then looks idle, and the
   * next job posted to it dies with it ('worker exited with code: 1', seen
   * under load).
   */
  private idle(workers: Parameters<Balancer>[1]): ReturnType<Balancer> {
    for (const w of workers) if (w.currentUsage === 0 && w.id >= 0 && !this.dying.has(w.id)) return w;
    return null;
  }

  constructor(options: WorkerPoolOptions) {
    this.mainThreads = options.threads;
    const queue = options.waitQueue;
    const main: Balancer = (task, workers) => {
      const worker = this.idle(workers);
      if (worker) queue?.handedOut(task);
      return worker;
    };
    this.main = this.piscina(options.threads, options, main, queue);
    this.standby =
      options.spareThreads > 0
        ? this.piscina(options.spareThreads, options, (_task, workers) => this.idle(workers))
        : undefined;
  }

  private piscina(threads: number, options: WorkerPoolOptions, balancer: Balancer, taskQueue?: TaskQueue): Pool {
    const pool: Pool = new Piscina({
      filename: RUNTIME,
      minThreads: threads,
      maxThreads: threads,
      concurrentTasksPerWorker: 1,
      loadBalancer: balancer,
      ...(taskQueue && { taskQueue }),
      idleTimeout: Number.POSITIVE_INFINITY,
      // Piscina's own wait- and run-time histograms: two native records per task that nothing here reads (the
      // metrics keep their own), on every call's path.
      recordTiming: false,
      workerData: options.init,
      execArgv: WORKER_EXEC_ARGV,
      ...(options.resourceLimits && { resourceLimits: options.resourceLimits }),
    });
    // A worker that dies between tasks must not take the process down.
    pool.on('error', (error: unknown) => process.emitWarning(`worker error: ${String(error)}`));
    return pool;
  }

  /**
   * Runs one job on the main pool: on a free thread now, else once the wait
   * queue hands it one. `done` hears how it ended, in the microtask after
   * Piscina saw the result. A worker that dies under it (crash, out of
   * memory, {@link terminate}) ends it as crashed.
   */
  run(task: WorkerTask, done: PoolCallback): void {
    WorkerPool.post(this.main, task, done);
  }

  /** Runs one job on the standby (the main pool without one). */
  runOnStandby(task: WorkerTask, done: PoolCallback): void {
    WorkerPool.post(this.standby ?? this.main, task, done);
  }

  private static post(pool: Pool, task: WorkerTask, done: PoolCallback): void {
    pool.run(task, task.port ? { transferList: [task.port] } : NO_TRANSFER).then(
      (outcome) => done.poolDone(outcome as WorkerOutcome),
      (error: unknown) =>
        done.poolDone({ kind: 'crashed', message: error instanceof Error ? error.message : String(error) }),
    );
  }

  /**
   * The hard stop: terminates one worker thread. Piscina fails the task it was
   * running and starts a replacement. Used only for a stopped job that ignored
   * its checkpoints past the grace period; a cooperative stop never gets here.
   */
  terminate(threadId: number): void {
    const worker =
      this.main.threads.find((w) => w.threadId === threadId) ??
      this.standby?.threads.find((w) => w.threadId === threadId);
    if (!worker) return;
    this.dying.add(threadId);
    worker.once('exit', () => this.dying.delete(threadId));
    void worker.terminate();
  }

  /**
   * Waits until every thread has started and loaded its tool modules (a
   * thread is ready only then), so a first call's deadline and grace period
   * do not include thread start-up. Each thread's report says what priority it got.
   */
  async warmup(): Promise<WarmupReport[]> {
    const each = (pool: Pool | undefined, n: number) =>
      Array.from({ length: pool ? n : 0 }, () => pool!.run({}, { name: 'warmup' }));
    return (await Promise.all([
      ...each(this.main, this.mainThreads),
      ...each(this.standby, this.standby?.options.maxThreads ?? 0),
    ])) as WarmupReport[];
  }

  /** Worker threads currently alive. */
  get threads(): number {
    return this.main.threads.length + (this.standby?.threads.length ?? 0);
  }

  /** Terminates every worker at once; running tasks settle as crashed. */
  async close(): Promise<void> {
    // destroy(), not close(): close() waits for tasks, and one whose worker a hard stop already removed never reports back.
    await Promise.all([this.main.destroy(), this.standby?.destroy()]);
  }
}
