/**
 * The pool worker: Piscina loads this file in every worker thread. It runs a
 * tool's stages in order, checking the job's shared state word before each
 * stage, and claims the right to respond with one compare-and-swap.
 */
import { threadId, workerData } from 'node:worker_threads';
import type {
  ClientAsk,
  JobReports,
  WorkerInit,
  WorkerTask,
  WorkerOutcome,
  WorkerMessage,
  MainMessage,
  WarmupReport,
} from '../src/pool/protocol.js';
import {
  StopError,
  stageName,
  toCallToolResult,
  toolsOfModule,
  type ClientRequestMethod,
  type StageContext,
  type ToolDefinition,
} from '../src/stages/tool.js';
import { claimResponse, leftRunning, startSlot, stillRunning, type WorkerSlot } from '../src/state/job-state.js';
import { gapWords, writeGap } from '../src/state/gap-clock.js';
import { runDelayMs } from './run-delay.js';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { assertPlainJson } from './plain-json.js';
import { checkOutput } from './output-check.js';
import { Reporter } from './reporter.js';
import { applyToolPriority } from './thread-priority.js';
import { LOGGING_LEVELS, severityOf, type LoggingLevel } from '../src/stages/log-levels.js';
import { ChildCells } from '../src/state/child-cells.js';
import type { SpawnOptions, SpawnResult } from '../src/stages/spawn.js';
import { disownChildren, installChildGuard, ownChildren, toolsLoaded } from './child-guard.js';
import { runSpawn } from './spawn.js';

const init = workerData as WorkerInit;
const words = new Int32Array(init.stateBuffer);
const childCells = new ChildCells(words.length / 3, init.childBuffer);
// Before any tool module loads: whatever a module keeps of node:child_process ends in the guarded spawn.
installChildGuard(childCells);
const gaps = gapWords(init.gapBuffer);
/** The ticker thread's coarse millisecond clock (word 0), read plainly by every check (src/state/gap-clock.ts). */
const clock = gaps.words;
/** The thread's wait for a core (ms) at the last check of any job on it; a job starts from it (no read per job). */
let threadDelay = init.gapBuffer ? runDelayMs() : 0;

/**
 * Loaded before Piscina marks this thread ready: Piscina awaits the import of
 * this file, top-level await included. It has to be, because an idle Piscina
 * worker blocks its event loop in Atomics.wait, which would freeze an import
 * still in flight; a replacement thread would then load every tool module
 * only when its first job arrived, and make that job wait for it.
 */
const tools: ReadonlyMap<string, ToolDefinition> = await loadTools(init.toolModules);
toolsLoaded();
/**
 * After the imports (at idle priority they would crawl on a busy machine), before the first job; a
 * replacement thread after a hard stop gets the same class as the first ones.
 */
const priority = applyToolPriority(init.toolPriority);

async function loadTools(modules: readonly string[]): Promise<Map<string, ToolDefinition>> {
  const byName = new Map<string, ToolDefinition>();
  for (const url of modules) {
    for (const tool of toolsOfModule((await import(url)) as Record<string, unknown>, url)) byName.set(tool.name, tool);
  }
  return byName;
}

/** A job that touches nothing: the pool runs one on each thread at start, to wait until every thread is ready. */
export function warmup(): WarmupReport {
  return { tools: tools.size, priority };
}

/**
 * Runs one job. Never throws for a stage's failure: the outcome says what happened.
 * Synchronous stages are not awaited: a zero-work call costs no extra event-loop turns.
 */
export default function runJob(task: WorkerTask): WorkerOutcome | Promise<WorkerOutcome> {
  const tool = tools.get(task.tool);
  const job = new Job(task);
  let value: unknown = task.args;
  try {
    if (!tool) throw new Error(`tool '${task.tool}' is not loaded in the worker`);
    for (let i = 0; i < tool.stages.length; i++) {
      value = job.enter(tool, i, value);
      if (isThenable(value)) return finishAsync(job, tool, i, value);
    }
    return job.conclude(value, tool);
  } catch (error) {
    return job.fail(error);
  }
}

/** The rest of a job once a stage has returned a promise. */
async function finishAsync(
  job: JobContext,
  tool: ToolDefinition,
  from: number,
  pending: PromiseLike<unknown>,
): Promise<WorkerOutcome> {
  try {
    let value = await pending;
    for (let i = from + 1; i < tool.stages.length; i++) value = await job.enter(tool, i, value);
    return job.conclude(value, tool);
  } catch (error) {
    return job.fail(error);
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

/**
 * Per-job state behind every stage's `ctx`; it is the `ctx` itself, renamed
 * per stage, and the job's {@link WorkerSlot}. One per job, not one per
 * thread: a stage may keep its `ctx` past its job (a timer, a stray promise),
 * and what it does with it then must never reach the next job.
 */
class JobContext implements StageContext, WorkerSlot {
  readonly settings = init.settings;
  tool = '';
  stage = 'start';
  words = words;
  index = 0;
  runningWord = 0;
  /** The clock at the job's last cancellation check, the longest gap between two so far, and the stage it ended in. */
  protected lastCheck = clock[0]!;
  /** This thread's wait for a core at the last check (./run-delay.ts): the last job's, until this one checks. */
  private lastDelay = threadDelay;
  private worstGap = 0;
  private worstStage = 0;
  private stageIndex = 0;
  private wasmCheck: (() => number) | undefined;
  /** Made on first use of `ctx.signal`: CPU stages that only checkpoint never pay for a waiter. */
  private controller: AbortController | undefined;
  private pending:
    Map<number, { resolve: (v: Record<string, unknown>) => void; reject: (e: Error) => void }> | undefined;
  private nextRid = 1;
  /** This turn's asks, not posted yet. */
  private asks: ClientAsk[] | undefined;
  private closed = false;
  private reporter: Reporter | undefined;
  /** A traced job's stage names and start times (see StageMarks); absent otherwise, and nothing is timed. */
  private readonly marks: { readonly stages: string[]; readonly at: number[] } | undefined;

  constructor(private readonly task: WorkerTask) {
    startSlot(this, words, task.slot, threadId);
    ownChildren(this);
    this.marks = task.trace ? { stages: [], at: [] } : undefined;
    task.port?.on('message', (m: MainMessage) => this.onMain(m));
  }

  /** Checks the state word, then runs stage `index`. */
  enter(tool: ToolDefinition, index: number, input: unknown): unknown {
    const s = tool.stages[index]!;
    // The gap that ends at this boundary was the previous stage's.
    const now = clock[0]!;
    if (now !== this.lastCheck) this.checked(now);
    this.stageIndex = index;
    this.tool = tool.name;
    this.stage = stageName(s, index);
    this.checkpoint();
    if (this.marks) {
      this.marks.stages.push(this.stage);
      this.marks.at.push(performance.timeOrigin + performance.now());
    }
    return typeof s === 'function' ? s(input as never, this) : s.run(input as never, this);
  }

  /** After the last stage: completion's side of the race. Only the winner may hand a result back. */
  conclude(value: unknown, tool: ToolDefinition): WorkerOutcome {
    try {
      const now = clock[0]!;
      if (now !== this.lastCheck) this.checked(now);
      this.stage = 'result';
      this.checkpoint();
      const result = toCallToolResult(value);
      // A declared outputSchema is a promise to the client (whose SDK rejects a mismatch): a result that breaks it fails here, as a tool error.
      if (!result.isError) checkOutput(tool, result);
      // A result the runtime built itself (from a string, or JSON.stringify) is plain by construction.
      if (result === value) assertPlainJson(result, 'result');
      if (!claimResponse(this, this.controller !== undefined))
        return this.withReports({ kind: 'stopped', stage: this.stage });
      const reports = this.withMarks(this.reporter?.finish(true), false);
      return reports ? { kind: 'result', result, reports } : result;
    } catch (error) {
      return this.fail(error);
    } finally {
      this.close();
    }
  }

  /** A stage threw (or the result cannot be sent): owed as an error only if completion still wins. */
  fail(error: unknown): WorkerOutcome {
    try {
      const now = clock[0]!;
      if (now !== this.lastCheck) this.checked(now);
      if (!stillRunning(this)) return this.withReports({ kind: 'stopped', stage: this.stage });
      const message = error instanceof Error ? error.message : String(error);
      return claimResponse(this, this.controller !== undefined)
        ? this.withReports({ kind: 'error', stage: this.stage, message })
        : this.withReports({ kind: 'stopped', stage: this.stage });
    } finally {
      this.close();
    }
  }

  /** The job's AbortSignal. The main thread's Atomics.notify wakes its waiter; no polling timer. */
  get signal(): AbortSignal {
    if (!this.controller) {
      const controller = (this.controller = new AbortController());
      void leftRunning(this).then(() => {
        if (!this.closed) controller.abort(new StopError());
      });
    }
    return this.controller.signal;
  }

  get stopped(): boolean {
    const now = clock[0]!;
    if (now !== this.lastCheck) this.checked(now);
    return !stillRunning(this);
  }

  checkpoint(): void {
    // A plain read of the ticker's word; the rest runs only when it moved since the last check (about once per tick).
    const now = clock[0]!;
    if (now !== this.lastCheck) this.checked(now);
    if (!stillRunning(this)) throw new StopError();
  }

  spawn(command: string, args?: readonly string[], options?: SpawnOptions): Promise<SpawnResult<never>> {
    // The overloads of StageContext.spawn tie the result's type to `encoding`; one implementation serves both.
    return this.owned(runSpawn(this, childCells, init.graceMs, command, args, options) as Promise<SpawnResult<never>>);
  }

  /**
   * An await the runtime owns (`ctx.spawn`, `ctx.requestClient`) is a check for as long as it waits: a stop ends
   * it at once. So the gap restarts when it settles; the wait itself is no gap.
   */
  private owned<T>(wait: Promise<T>): Promise<T> {
    return wait.finally(() => {
      this.lastCheck = clock[0]!;
      this.lastDelay = threadDelay = runDelayMs();
    });
  }

  /** Made on first use, bound to this job: a WebAssembly module imports it as a plain function. */
  get wasmCheckpoint(): () => number {
    return (this.wasmCheck ??= () => {
      const now = clock[0]!;
      if (now !== this.lastCheck) this.checked(now);
      return Atomics.load(this.words, this.index) === this.runningWord ? 0 : 1;
    });
  }

  /**
   * A cancellation check at clock value `now` (about once per tick): the time
   * since the last one, less the time this thread waited for a core in it,
   * may be the job's worst gap.
   */
  protected checked(now: number): void {
    const delay = runDelayMs();
    const gap = Math.max(0, Math.round(now - this.lastCheck - (delay - this.lastDelay)));
    this.lastCheck = now;
    this.lastDelay = threadDelay = delay;
    if (gap > this.worstGap) {
      this.worstGap = gap;
      this.worstStage = this.stageIndex;
    }
  }

  progress(progress: number, total?: number, message?: string): void {
    if (this.task.progress !== true || this.closed) return;
    this.reports().progress(progress, total, message);
  }

  log(level: LoggingLevel, message: string, data?: unknown): void {
    const severity = severityOf(level);
    if (severity === undefined)
      throw new TypeError(`ctx.log: ${JSON.stringify(level)} is not a log level (one of ${LOGGING_LEVELS.join(', ')})`);
    if (severity < (this.task.minLogSeverity ?? 0) || this.closed) return;
    this.reports().log(severity, level, String(message), data);
  }

  /** Made on first report: a job that reports nothing pays nothing. */
  private reports(): Reporter {
    return (this.reporter ??= new Reporter(this.task.port, init.progressIntervalMs));
  }

  /** Attaches what the job reported, if anything, to an outcome other than a result. */
  private withReports(outcome: Exclude<WorkerOutcome, CallToolResult | { kind: 'result' }>): WorkerOutcome {
    const reports = this.withMarks(this.reporter?.finish(outcome.kind !== 'stopped'), outcome.kind === 'stopped');
    return reports ? { ...outcome, reports } : outcome;
  }

  /** A traced job's reports carry its stage timings, stamped with the moment it ended here. */
  private withMarks(reports: JobReports | undefined, stopped: boolean): JobReports | undefined {
    if (!this.marks) return reports;
    const marks = {
      thread: threadId,
      stages: this.marks.stages,
      at: this.marks.at,
      end: performance.timeOrigin + performance.now(),
      ...(stopped && { stoppedAt: this.stage }),
    };
    return { ...(reports ?? { posted: 0 }), marks };
  }

  requestClient(method: ClientRequestMethod, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (!this.task.port)
      return Promise.reject(
        new Error(`tool '${this.task.tool}' must be declared with usesClient: true to call ${method}`),
      );
    this.checkpoint();
    // What the client is sent must be plain JSON, as a result must: a cycle or a class instance fails here, in the tool, not on the wire.
    assertPlainJson(params, `ctx.requestClient('${method}') params`);
    const rid = this.nextRid++;
    return this.owned(
      new Promise((resolve, reject) => {
        (this.pending ??= new Map()).set(rid, { resolve, reject });
        this.queueAsk({ rid, method, params });
        this.signal.addEventListener('abort', () => reject(new StopError()), { once: true });
      }),
    );
  }

  /**
   * Asks made in one turn leave together, after it (a microtask): a 2026 call answers every question the job has
   * asked so far in one input_required, and separate messages could straddle the round's cut under load.
   */
  private queueAsk(ask: ClientAsk): void {
    if (this.asks) {
      this.asks.push(ask);
      return;
    }
    const asks = (this.asks = [ask]);
    queueMicrotask(() => {
      this.asks = undefined;
      this.post({ type: 'requests', asks });
    });
  }

  private onMain(message: MainMessage): void {
    const waiter = this.pending?.get(message.rid);
    if (!waiter) return;
    this.pending!.delete(message.rid);
    // The wait for the client is the runtime's own await, and it is stopped with the job: it counts as checked.
    this.lastCheck = clock[0]!;
    if (message.type === 'response') waiter.resolve(message.result);
    else waiter.reject(new Error(message.message));
  }

  private post(message: WorkerMessage): void {
    this.task.port?.postMessage(message);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    disownChildren(this);
    writeGap(gaps, this.index, this.worstGap, this.worstStage);
    this.reporter?.stop();
    // Releases this job's waiter, if it has one, should the job ever end without leaving `running`.
    if (this.controller) Atomics.notify(this.words, this.index);
    this.task.port?.close();
  }
}

/**
 * The job context with gaps not measured (`checkpointGaps: false`): checks do
 * only their atomic load, as they did before gaps were measured. What the
 * measurement costs is the difference between the two (bench/checkpoint-overhead.ts).
 */
class UnmeasuredJobContext extends JobContext {
  override get stopped(): boolean {
    return !stillRunning(this);
  }

  override checkpoint(): void {
    if (!stillRunning(this)) throw new StopError();
  }
}

/** One class per thread, so every check site stays monomorphic. */
const Job = init.gapBuffer ? JobContext : UnmeasuredJobContext;
