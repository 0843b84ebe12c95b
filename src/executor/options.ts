/** The executor's options: their documentation, their defaults and their checks. */
import type { ResourceLimits } from 'node:worker_threads';
import type { ToolPriority } from '../pool/protocol.js';
import { pathToFileURL } from 'node:url';
import { DEFAULTS } from '../defaults.js';
import { InvalidOptionError, ToolModuleError } from '../errors.js';
import { toolsOfModule, type ToolDefinition } from '../stages/tool.js';

/** The built-in tools module, compiled next to the runtime. */
export const BUILTIN_TOOLS = new URL('../../workers/tools/index.js', import.meta.url).href;

/** Options for `Executor.create`. Every number is checked; a bad one throws {@link InvalidOptionError} naming it. */
export interface ExecutorOptions {
  /**
   * Worker threads that run jobs.
   * @default the machine's available parallelism
   */
  readonly threads?: number;
  /**
   * Warm standby threads beyond `threads`. When a running job is cancelled (or
   * times out), its admission slot passes to the next queued job on a standby
   * thread, instead of after the stopped job reaches its next checkpoint (or
   * its grace period ends). The stopped job's remaining partial stage overlaps
   * the next job, so for that moment up to `threads + spareThreads` threads
   * are busy. The slot passes at once while a core is free for it, otherwise
   * after `handoffDelayMs`. 0 keeps strictly `threads` jobs on threads.
   * @default 1
   */
  readonly spareThreads?: number;
  /**
   * Cores the workers may use: a stopped job hands its slot to the standby at
   * once only while fewer jobs than this are on threads.
   * @default the machine's available parallelism
   */
  readonly cores?: number;
  /**
   * When every core is busy, how long a stopped job may take to reach its next
   * checkpoint before its slot passes to the standby anyway. Waiting for a job
   * that is about to stop is cheaper than splitting the busy cores three ways
   * with its last partial stage. 0 hands the slot on at once.
   * @default 2
   */
  readonly handoffDelayMs?: number;
  /**
   * Jobs allowed to wait for a worker; one more fails at once with a queue-full error.
   * @default 256
   */
  readonly queueLimit?: number;
  /**
   * Jobs of one caller (a call's `turn`, the authorized caller over HTTP) allowed to wait for a worker, checked
   * before {@link ExecutorOptions.queueLimit}; one more fails at once with a per-caller queue-share error. Calls
   * without a `turn` (stdio, HTTP without OAuth: one caller) count against the total only.
   * @default half of queueLimit, rounded up
   */
  readonly queueLimitPerCaller?: number;
  /**
   * How long (ms) a stopped job may ignore its checkpoints before its worker is terminated and replaced.
   * @default 1000
   */
  readonly graceMs?: number;
  /** Tool modules (paths or file URLs), loaded on the main thread for metadata and in every worker for the stages. */
  readonly toolModules?: readonly (string | URL)[];
  /**
   * Include the built-in tools.
   * @default true
   */
  readonly builtins?: boolean;
  /** Per-worker V8 heap limits (Piscina `resourceLimits`); a job that exceeds them fails alone. Buffers, ArrayBuffers and native memory are not counted. */
  readonly resourceLimits?: ResourceLimits;
  /** Settings every stage sees as `ctx.settings`; must be cloneable. The built-in file tools read `root`. */
  readonly toolSettings?: Readonly<Record<string, unknown>>;
  /**
   * Minimum gap (ms) between two progress reports of one job, enforced in the
   * worker (the latest report waits; the last one before the job returns is
   * always delivered, before its outcome). Also the refill period of each
   * job's log budget.
   * @default 50
   */
  readonly progressIntervalMs?: number;
  /**
   * How the worker threads are scheduled. `'idle'` (Linux) puts them in the
   * SCHED_IDLE class: the main thread (transport, cancels, pings, Redis
   * replies on a worker host) preempts a spinning tool at once, instead of
   * waiting up to a timer tick for a core. The cost: tools then run only on
   * CPU time no normal-priority program wants, so use it on machines that
   * are there for the tools (a worker host), not on a shared desktop. Where
   * SCHED_IDLE cannot be set on Linux, the threads get nice 19 (a smaller
   * share of CPU, without the immediate preemption); off Linux they stay
   * normal. Either way a warning says why. Processes and threads a tool
   * starts inherit the class.
   * @default 'normal'
   */
  readonly toolPriority?: ToolPriority;
  /**
   * Measure each call's checkpoint gap: the longest time its stages went
   * without a cancellation check (see `ToolDefinition.cancelWithinMs`),
   * shown per tool in `stats().checkpointGaps`, exported as a histogram and
   * put on the run span. It costs a checkpoint one plain memory read and
   * the process one small thread waking every 2 ms; `false` is there to
   * measure that cost (bench scenario `checkpoint-gaps`).
   * @default true
   */
  readonly checkpointGaps?: boolean;
}

/** The options with every default applied. */
export interface ResolvedOptions {
  readonly threads: number;
  readonly spareThreads: number;
  readonly cores: number;
  readonly handoffDelayMs: number;
  readonly queueLimit: number;
  readonly queueLimitPerCaller: number;
  readonly graceMs: number;
  readonly progressIntervalMs: number;
  readonly toolModules: readonly string[];
  readonly resourceLimits: ResourceLimits | undefined;
  readonly toolSettings: Readonly<Record<string, unknown>>;
  readonly toolPriority: ToolPriority;
  readonly checkpointGaps: boolean;
}

/** Applies the defaults and checks every value, like piscina and p-queue do. */
export function resolveOptions(options: ExecutorOptions): ResolvedOptions {
  if (options === null || typeof options !== 'object') throw new InvalidOptionError('options', 'expected an object');
  const resolved: ResolvedOptions = {
    threads: count(options, 'threads', 1, DEFAULTS.threads()),
    spareThreads: count(options, 'spareThreads', 0, DEFAULTS.spareThreads),
    cores: count(options, 'cores', 1, DEFAULTS.cores()),
    handoffDelayMs: count(options, 'handoffDelayMs', 0, DEFAULTS.handoffDelayMs),
    queueLimit: count(options, 'queueLimit', 0, DEFAULTS.queueLimit),
    queueLimitPerCaller: 0,
    graceMs: count(options, 'graceMs', 0, DEFAULTS.graceMs),
    progressIntervalMs: count(options, 'progressIntervalMs', 0, DEFAULTS.progressIntervalMs),
    toolModules: moduleUrls(options),
    resourceLimits: options.resourceLimits,
    toolSettings: options.toolSettings ?? {},
    toolPriority: options.toolPriority ?? DEFAULTS.toolPriority,
    checkpointGaps: options.checkpointGaps ?? true,
  };
  if (typeof resolved.checkpointGaps !== 'boolean')
    throw new InvalidOptionError('checkpointGaps', `expected a boolean, got ${JSON.stringify(options.checkpointGaps)}`);
  if (resolved.toolPriority !== 'normal' && resolved.toolPriority !== 'idle') {
    throw new InvalidOptionError(
      'toolPriority',
      `expected 'normal' or 'idle', got ${typeof resolved.toolPriority === 'string' ? JSON.stringify(resolved.toolPriority) : String(resolved.toolPriority)}`,
    );
  }
  if (
    options.toolSettings !== undefined &&
    (options.toolSettings === null || typeof options.toolSettings !== 'object')
  ) {
    throw new InvalidOptionError('toolSettings', 'expected an object');
  }
  return {
    ...resolved,
    queueLimitPerCaller: count(options, 'queueLimitPerCaller', 0, Math.ceil(resolved.queueLimit / 2)),
  };
}

type NumericOption =
  | 'threads'
  | 'spareThreads'
  | 'cores'
  | 'handoffDelayMs'
  | 'queueLimit'
  | 'queueLimitPerCaller'
  | 'graceMs'
  | 'progressIntervalMs';

function count(options: ExecutorOptions, name: NumericOption, min: number, fallback: number): number {
  const value: unknown = options[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new InvalidOptionError(
      name,
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- what JSON cannot show (undefined, a function), as JavaScript shows it
      `expected an integer >= ${min}, got ${typeof value === 'number' ? value : (JSON.stringify(value) ?? String(value))}`,
    );
  }
  return value;
}

function moduleUrls(options: ExecutorOptions): string[] {
  const modules: unknown = options.toolModules ?? [];
  if (!Array.isArray(modules)) throw new InvalidOptionError('toolModules', 'expected an array of paths or file URLs');
  return [
    ...(options.builtins === false ? [] : [BUILTIN_TOOLS]),
    ...modules.map((m: unknown) => {
      if (m instanceof URL) return m.href;
      if (typeof m !== 'string')
        throw new InvalidOptionError('toolModules', `expected a path or file URL, got ${typeof m}`);
      return m.startsWith('file:') ? m : pathToFileURL(m).href;
    }),
  ];
}

/** Imports the tool modules on the main thread for their metadata. */
export async function loadTools(urls: readonly string[]): Promise<Map<string, ToolDefinition>> {
  const tools = new Map<string, ToolDefinition>();
  for (const url of urls) {
    for (const tool of toolsOfModule((await import(url)) as Record<string, unknown>, url)) {
      if (tools.has(tool.name)) throw new ToolModuleError(`tool '${tool.name}' is defined twice (again in ${url})`);
      tools.set(tool.name, tool);
    }
  }
  return tools;
}
