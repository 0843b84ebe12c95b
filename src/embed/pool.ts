/**
 * The pool inside an MCP server you already have: CPU-heavy tools, written
 * with `defineTool` (stages, `ctx.checkpoint()`), registered on your own SDK
 * 2.x `McpServer` next to its own tools, with what `serve` gives them:
 * cancellation in every form the SDK delivers that stops the work and sends
 * nothing more, progress, logs, deadlines, the queue limit, fairness, the
 * stats resource and the Prometheus registry.
 *
 * One pool per process ({@link createToolPool}), made once; {@link ToolPool.register}
 * per server instance, as cheap as the SDK's `registerTool` itself: every
 * schema, config and handler was built with the pool, so a stateless HTTP
 * handler that builds a server per request converts nothing and allocates
 * nothing of its own per tool.
 */
import type { McpServer, ServerContext } from '@modelcontextprotocol/server';
import { Executor } from '../executor/executor.js';
import type { ExecutorOptions } from '../executor/options.js';
import type { CallBackend } from '../backend/backend.js';
import type { RequestId } from '../wire/registry.js';
import { listedTools, serverStats, statsContents, STATS_RESOURCE, type ServerStats } from '../server/server.js';
import { newWireStats, type WireStats } from '../server/guard.js';
import { TaskRunner } from '../tasks/runner.js';
import { InputWaits } from '../asks/input-waits.js';
import { instrumentBackend } from '../ops/instrument.js';
import { frontEndOps, type Ops } from '../ops/ops.js';
import type { Metrics } from '../ops/metrics.js';
import type { HealthHandler } from '../ops/health.js';
import { InvalidOptionError } from '../errors.js';
import { listedSchema } from './listed-schema.js';
import { pooledCall, type PoolSite } from './pooled-call.js';
import { answerRefusals } from './wire-refusals.js';
// Registers the jobs' spans with the executor (src/executor/job-tracing.ts), which imports nothing of otel/.
import '../otel/job-trace.js';

/**
 * Options for {@link createToolPool}: the executor's (threads, queue limit, grace, tool modules, …) and the
 * embedding's. Unlike `Executor.create`, the built-in tools are left out unless `builtins: true`.
 */
export interface ToolPoolOptions extends ExecutorOptions {
  /**
   * The key calls are queued fairly by: calls of one key wait behind each other, keys take turns.
   * @default the request's auth client id (`ctx.http.authInfo.clientId`), else its session id, else one key shared by all
   */
  readonly fairnessKey?: (ctx: ServerContext) => string;
  /**
   * Also collect the timing histograms (queue wait, run time, cancel → stopped, cancel → slot reused) and the
   * process metrics (CPU, memory, event-loop lag; a timer every 10 ms) in {@link ToolPool.metrics}. Counters and
   * gauges are there either way, read when scraped.
   * @default false
   */
  readonly metrics?: boolean;
}

/** Options for {@link ToolPool.register}. */
export interface RegisterOptions {
  /**
   * The pool's tools to register on this server.
   * @default all of them
   */
  readonly tools?: readonly string[];
}

/** One tool, ready to hand to `registerTool`: built once with the pool. */
interface Registration {
  readonly name: string;
  readonly config: Parameters<McpServer['registerTool']>[1];
  readonly handler: Parameters<McpServer['registerTool']>[2];
}

/** The default fairness key; see {@link ToolPoolOptions.fairnessKey}. */
function defaultFairnessKey(ctx: ServerContext): string {
  const clientId = ctx.http?.authInfo?.clientId;
  if (clientId) return `client:${clientId}`;
  return ctx.sessionId ? `session:${ctx.sessionId}` : 'shared';
}

/** A worker pool whose tools can be registered on any number of SDK 2.x `McpServer` instances; see the module comment. */
export class ToolPool {
  readonly #executor: Executor;
  readonly #backend: CallBackend;
  readonly #wire: WireStats;
  readonly #tasks: TaskRunner;
  readonly #inputWaits: InputWaits;
  readonly #ops: Ops;
  readonly #registrations: ReadonlyMap<string, Registration>;
  readonly #refusals = new WeakMap<AbortSignal, Error>();
  readonly #readStats = () => statsContents(this.stats());
  /** The stats resource's metadata for `registerResource`, made once. */
  static readonly #statsMetadata = (({ uri: _uri, name: _name, ...metadata }) => metadata)(STATS_RESOURCE);
  #closed = false;

  private constructor(executor: Executor, options: ToolPoolOptions) {
    this.#executor = executor;
    this.#wire = newWireStats();
    // Never used for calls: there so that `executor://stats` has serve's fields (tasks are not offered on an embedded server).
    this.#tasks = new TaskRunner(executor);
    this.#inputWaits = new InputWaits(executor);
    const collect = options.metrics ?? false;
    this.#ops = frontEndOps(
      {
        stats: () => executor.stats(),
        taskStats: () => this.#tasks.stats(),
        wire: this.#wire,
        tools: new Set(executor.tools.keys()),
        accepting: () => !this.#closed,
      },
      { local: true, scrapeable: collect },
    );
    // Calls are counted once: by the job events when they are collected, otherwise at this seam.
    this.#backend = instrumentBackend(executor, this.#ops.metrics, { countCalls: !collect });
    let seq = 0;
    const site: PoolSite = {
      backend: this.#backend,
      wire: this.#wire,
      fairnessKey: options.fairnessKey ?? defaultFairnessKey,
      mint: (): RequestId => ++seq,
      refusals: this.#refusals,
    };
    const registrations = new Map<string, Registration>();
    for (const listed of listedTools(executor)) {
      const name = listed.name;
      const config = {
        ...(listed.title !== undefined && { title: listed.title }),
        description: listed.description,
        inputSchema: listedSchema(listed.inputSchema),
        ...(listed.outputSchema && { outputSchema: listedSchema(listed.outputSchema) }),
        ...(listed.annotations && { annotations: listed.annotations }),
      };
      const handler = (args: unknown, ctx: ServerContext) => pooledCall(site, name, args, ctx);
      registrations.set(name, { name, config, handler } as unknown as Registration);
    }
    this.#registrations = registrations;
  }

  /** Starts the pool (its threads warmed up) with the tools of `options.toolModules`. */
  static async create(options: ToolPoolOptions = {}): Promise<ToolPool> {
    if (options.fairnessKey !== undefined && typeof options.fairnessKey !== 'function')
      throw new InvalidOptionError('fairnessKey', 'expected a function of the request context');
    return new ToolPool(await Executor.create({ ...options, builtins: options.builtins ?? false }), options);
  }

  /** The pool's tool names. */
  get tools(): readonly string[] {
    return [...this.#registrations.keys()];
  }

  /**
   * Registers the pool's tools (or `options.tools` of them) on `server`, as its `registerTool` would, plus one
   * wrapper on its `tools/call` handler so a full queue is answered with serve's JSON-RPC error. Call it on every
   * server instance, before connecting it; tools of your own may be registered before or after.
   */
  register(server: McpServer, options: RegisterOptions = {}): void {
    const names = options.tools ?? this.#registrations.keys();
    for (const name of names) {
      const r = this.#registrations.get(name);
      if (!r)
        throw new InvalidOptionError('tools', `the pool has no tool '${name}' (it has: ${this.tools.join(', ')})`);
      server.registerTool(r.name, r.config, r.handler);
    }
    answerRefusals(server, this.#refusals);
  }

  /** Registers the `executor://stats` resource on `server`: the same JSON as `serve`'s, of this pool. */
  registerStats(server: McpServer): void {
    server.registerResource(STATS_RESOURCE.name, STATS_RESOURCE.uri, ToolPool.#statsMetadata, this.#readStats);
  }

  /** The counters `executor://stats` shows (the pool's, the gate's; tasks and 2026 input waits stay at 0). */
  stats(): ServerStats {
    return serverStats(this.#executor, this.#wire, this.#tasks, this.#inputWaits);
  }

  /** The pool's Prometheus metrics (`metrics.registry` is the prom-client registry), the names `serve` uses. */
  get metrics(): Metrics {
    return this.#ops.metrics;
  }

  /** Answers `GET /healthz`, `/readyz` and `/metrics` on a Node HTTP server (returns false for other paths). */
  healthHandler(authToken?: string): HealthHandler {
    return this.#ops.handler(authToken);
  }

  /**
   * Cancels every call (nothing is sent for them; their handlers settle once the SDK will send nothing) and stops the
   * workers.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#executor.close();
    await this.#tasks.close();
    this.#inputWaits.close();
    this.#ops.close();
  }
}

/**
 * Makes the process's pool: `const pool = await createToolPool({ toolModules: [new URL('./heavy-tools.mjs',
 * import.meta.url)] })`, then `pool.register(server)` on each `McpServer`. See {@link ToolPool}.
 */
export function createToolPool(options: ToolPoolOptions = {}): Promise<ToolPool> {
  return ToolPool.create(options);
}
