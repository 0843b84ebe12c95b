/**
 * The worker pool: Piscina running workers/runtime.js. A cooperative stop
 * never touches the thread; only the hard stop (grace expired) aborts the
 * task through Piscina, which terminates and replaces that one worker.
 */
import { Piscina } from 'piscina';
import type { ResourceLimits } from 'node:worker_threads';
import type { WorkerInit, WorkerOutcome, WorkerTask } from './protocol.js';

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
  | { readonly kind: 'crashed'; readonly message: string; readonly hardStopped: boolean };

export interface WorkerPoolOptions {
  readonly threads: number;
  readonly init: WorkerInit;
  readonly resourceLimits?: ResourceLimits;
}

export class WorkerPool {
  private readonly piscina: Piscina<WorkerTask | Record<string, never>, WorkerOutcome>;

  constructor(options: WorkerPoolOptions) {
    this.piscina = new Piscina({
      filename: RUNTIME,
      minThreads: options.threads,
      maxThreads: options.threads,
      // Admission (p-queue) already limits work to one job per thread; Piscina's own queue stays empty.
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
   * Runs one job. `hardStop` aborts the Piscina task, which terminates the
   * worker running it: used only when a stopped job ignored its checkpoints.
   */
  async run(task: WorkerTask, hardStop: AbortSignal): Promise<PoolOutcome> {
    try {
      return await this.piscina.run(task, {
        signal: hardStop,
        ...(task.port && { transferList: [task.port] }),
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { kind: 'crashed', message, hardStopped: hardStop.aborted };
    }
  }

  /**
   * Waits until every thread has loaded its tool modules, so a first call's
   * deadline and grace period do not include thread start-up.
   */
  async warmup(threads: number): Promise<void> {
    await Promise.all(Array.from({ length: threads }, () => this.piscina.run({}, { name: 'warmup' })));
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
