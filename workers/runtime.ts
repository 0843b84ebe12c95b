/**
 * The pool worker: Piscina loads this file in every worker thread. It runs a
 * tool's stages in order, checking the job's shared state word before each
 * stage, and claims the right to respond with one compare-and-swap.
 */
import { threadId, workerData, type MessagePort } from 'node:worker_threads';
import type { WorkerInit, WorkerTask, WorkerOutcome, WorkerMessage, MainMessage } from '../src/pool/protocol.js';
import {
  StopError,
  stageName,
  toCallToolResult,
  toolsOfModule,
  type ClientRequestMethod,
  type StageContext,
  type ToolDefinition,
} from '../src/stages/tool.js';
import { claimResponse, leftRunning, stillRunning, workerSlot, type WorkerSlot } from '../src/state/job-state.js';
import { assertPlainJson } from './plain-json.js';

const init = workerData as WorkerInit;
const words = new Int32Array(init.stateBuffer);
const tools: Promise<Map<string, ToolDefinition>> = loadTools(init.toolModules);

async function loadTools(modules: readonly string[]): Promise<Map<string, ToolDefinition>> {
  const byName = new Map<string, ToolDefinition>();
  for (const url of modules) {
    for (const tool of toolsOfModule((await import(url)) as Record<string, unknown>, url)) byName.set(tool.name, tool);
  }
  return byName;
}

/** Resolves once this worker has loaded every tool module; the pool calls it on each thread at start. */
export async function warmup(): Promise<number> {
  return (await tools).size;
}

/** Runs one job. Never throws for a stage's failure: the outcome says what happened. */
export default async function runJob(task: WorkerTask): Promise<WorkerOutcome> {
  const tool = (await tools).get(task.tool);
  const slot = workerSlot(words, task.slot, threadId);
  const job = new JobContext(slot, task);
  let current = 'start';
  try {
    if (!tool) throw new Error(`tool '${task.tool}' is not loaded in the worker`);
    let value: unknown = task.args;
    for (let i = 0; i < tool.stages.length; i++) {
      const s = tool.stages[i]!;
      current = stageName(s, i);
      job.checkpoint();
      const ctx = job.forStage(tool.name, current);
      value = await (typeof s === 'function' ? s(value as never, ctx) : s.run(value as never, ctx));
    }
    current = 'result';
    job.checkpoint();
    const result = toCallToolResult(value);
    assertPlainJson(result, 'result');
    // Completion's side of the race: only the winner may hand a result back.
    return claimResponse(slot) ? { kind: 'result', result } : { kind: 'stopped', stage: current };
  } catch (error) {
    if (!stillRunning(slot)) return { kind: 'stopped', stage: current };
    const message = error instanceof Error ? error.message : String(error);
    return claimResponse(slot) ? { kind: 'error', stage: current, message } : { kind: 'stopped', stage: current };
  } finally {
    job.close();
  }
}

/** Per-job state behind every stage's `ctx`. */
class JobContext {
  /** Made on first use of `ctx.signal`: CPU stages that only checkpoint never pay for a waiter. */
  private controller: AbortController | undefined;
  private readonly pending = new Map<number, { resolve: (v: Record<string, unknown>) => void; reject: (e: Error) => void }>();
  private nextRid = 1;
  private closed = false;

  constructor(
    private readonly slot: WorkerSlot,
    private readonly task: WorkerTask,
  ) {
    task.port?.on('message', (m: MainMessage) => this.onMain(m));
  }

  /** The job's AbortSignal. The main thread's Atomics.notify wakes its waiter; no polling timer. */
  get signal(): AbortSignal {
    if (!this.controller) {
      const controller = (this.controller = new AbortController());
      void leftRunning(this.slot).then(() => {
        if (!this.closed) controller.abort(new StopError());
      });
    }
    return this.controller.signal;
  }

  checkpoint(): void {
    if (!stillRunning(this.slot)) throw new StopError();
  }

  forStage(tool: string, stage: string): StageContext {
    const job = this;
    return {
      get signal() {
        return job.signal;
      },
      settings: init.settings,
      tool,
      stage,
      get stopped() {
        return !stillRunning(job.slot);
      },
      checkpoint: () => this.checkpoint(),
      progress: (progress, total, message) => {
        if (!this.task.wantsProgress || this.closed) return;
        this.post({ type: 'progress', progress, ...(total !== undefined && { total }), ...(message !== undefined && { message }) });
      },
      requestClient: (method, params) => this.requestClient(method, params),
    };
  }

  private requestClient(method: ClientRequestMethod, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (!this.task.port) return Promise.reject(new Error(`tool '${this.task.tool}' must be declared with usesClient: true to call ${method}`));
    this.checkpoint();
    const rid = this.nextRid++;
    return new Promise((resolve, reject) => {
      this.pending.set(rid, { resolve, reject });
      this.post({ type: 'request', rid, method, params });
      this.signal.addEventListener('abort', () => reject(new StopError()), { once: true });
    });
  }

  private onMain(message: MainMessage): void {
    const waiter = this.pending.get(message.rid);
    if (!waiter) return;
    this.pending.delete(message.rid);
    if (message.type === 'response') waiter.resolve(message.result);
    else waiter.reject(new Error(message.message));
  }

  private post(message: WorkerMessage): void {
    this.task.port?.postMessage(message);
  }

  close(): void {
    this.closed = true;
    // Releases this job's waiter, if it has one, should the job ever end without leaving `running`.
    if (this.controller) Atomics.notify(this.slot.words, this.slot.index);
    this.task.port?.close();
  }
}
