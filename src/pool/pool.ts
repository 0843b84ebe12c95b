/**
 * The worker pool: Piscina running workers/runtime.js. A cooperative stop
 * never touches the thread; only the hard stop (grace expired) terminates the
 * one worker that runs the stuck job, and Piscina replaces it.
 */
import { Piscina } from 'piscina';
import type { ResourceLimits } from 'node:worker_threads';
import type { WarmupReport, WorkerInit, WorkerOutcome, WorkerTask } from './protocol.js';

/**
 * Piscina loads a worker file with require() first. On Node versions where
 * require() of ES modules is on, that path has aborted whole processes with a
 * native assertion (CreateRequiredModuleFacade) while workers were being
 * replaced; turning it off in the workers makes Piscina fall back to import().
 */
const WORKER_EXEC_ARGV = process.allowedNodeEnvironmentFlags.has('--experimental-require-module')
  ? [...process.execArgv, '--no-experimental-require-module']
  : process.execArgv;

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

export interface WorkerPoolOptions {
  readonly threads: number;
  readonly init: WorkerInit;
  readonly resourceLimits?: ResourceLimits;
}

/** Piscina's run options for a task without a port: one shared object. */
const NO_TRANSFER = {};

export class WorkerPool {
  private readonly piscina: Piscina<WorkerTask | Record<string, never>, WorkerOutcome | WarmupReport>;

  constructor(options: WorkerPoolOptions) {
    this.piscina = new Piscina({
      filename: RUNTIME,
      minThreads: options.threads,
      maxThreads: options.threads,
      // Admission already limits work to one job per thread; Piscina's own queue stays empty.
      concurrentTasksPerWorker: 1,
      idleTimeout: Number.POSITIVE_INFINITY,
      workerData: options.init,
      execArgv: WORKER_EXEC_ARGV,
      ...(options.resourceLimits && { resourceLimits: options.resourceLimits }),
    });
    // A worker that dies between tasks must not take the process down.
    this.piscina.on('error', (error: unknown) => process.emitWarning(`worker error: ${String(error)}`));
  }

  /**
   * Runs one job; `done` hears how it ended, in the microtask after Piscina
   * saw the result. A worker that dies under it (crash, out of memory,
   * {@link terminate}) ends it as crashed.
   */
  run(task: WorkerTask, done: PoolCallback): void {
    this.piscina.run(task, task.port ? { transferList: [task.port] } : NO_TRANSFER).then(
      (outcome) => done.poolDone(outcome as WorkerOutcome),
      (error: unknown) => done.poolDone({ kind: 'crashed', message: error instanceof Error ? error.message : String(error) }),
    );
  }

  /**
   * The hard stop: terminates one worker thread. Piscina fails the task it was
   * running and starts a replacement. Used only for a stopped job that ignored
   * its checkpoints past the grace period; a cooperative stop never gets here.
   */
  terminate(threadId: number): void {
    void this.piscina.threads.find((w) => w.threadId === threadId)?.terminate();
  }

  /**
   * Waits until every thread has started and loaded its tool modules (a
   * thread is ready only then), so a first call's deadline and grace period
   * do not include thread start-up. Each thread's report says what priority it got.
   */
  async warmup(threads: number): Promise<WarmupReport[]> {
    return (await Promise.all(Array.from({ length: threads }, () => this.piscina.run({}, { name: 'warmup' })))) as WarmupReport[];
  }

  /** Worker threads currently alive. */
  get threads(): number {
    return this.piscina.threads.length;
  }

  /** Terminates every worker at once; running tasks settle as crashed. */
  async close(): Promise<void> {
    // destroy(), not close(): close() waits for tasks, and one whose worker a hard stop already removed never reports back.
    await this.piscina.destroy();
  }
}
