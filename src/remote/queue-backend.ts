/**
 * The queue backend: a front end's {@link CallBackend} that puts each call on
 * a BullMQ queue for worker hosts. The Redis state CAS decides each race; the
 * front end answers only for a job whose Redis state is `responding` (the
 * host publishes the outcome in that same atomic step).
 */
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { BackendStats, CallBackend, CancelResult } from '../backend/backend.js';
import { DuplicateRequestError, ExecutorClosedError } from '../errors.js';
import { InFlightRegistry, type RequestId } from '../wire/registry.js';
import type { ToolDefinition } from '../stages/tool.js';
import { JobStates } from './job-states.js';
import { Liveness, LIVENESS_REFRESH_MS, LIVENESS_TTL_MS } from './liveness.js';
import { DEFAULT_QUEUE, parseFrontMessage } from './messages.js';
import { RemoteCall } from './remote-call.js';
import { loadToolCatalog } from './tool-catalog.js';

/**
 * How long a job may stay on a host whose liveness key is gone before the
 * front end answers it with an error. BullMQ's stalled check (lock 5 s, check
 * every 2.5 s on the hosts) hands it to another host well inside this; with
 * the 3 s liveness TTL and 1 s sweep, the answer comes within 15 s of a crash.
 */
export const LOST_HOST_TIMEOUT_MS = 9000;

/** Options for {@link QueueBackend.create}. */
export interface QueueBackendOptions {
  /** e.g. `redis://127.0.0.1:6379`. */
  readonly redisUrl: string;
  /** @default 'mcp-cancel-pool' */
  readonly queue?: string;
  /** Tool modules, the same as the worker hosts load (metadata and argument validation only). */
  readonly toolModules?: readonly (string | URL)[];
  /** @default true */
  readonly builtins?: boolean;
  /** @default {@link LOST_HOST_TIMEOUT_MS} */
  readonly lostHostTimeoutMs?: number;
  /** How long queuing a call may take before it fails with an error. @default 2000 */
  readonly submitTimeoutMs?: number;
}

/** @internal What a {@link RemoteCall} needs from its backend. */
export interface RemoteContext {
  readonly frontId: string;
  readonly redisUrl: string;
  readonly states: JobStates;
  readonly queue: Queue;
  readonly tools: ReadonlyMap<string, ToolDefinition>;
  readonly counters: BackendStats;
  readonly submitTimeoutMs: number;
  /** Whether the command connection is up (new calls fail at once otherwise). */
  connected(): boolean;
  /** Jobs on the queue by BullMQ job id, for their channel messages. */
  readonly byJob: Map<string, RemoteCall>;
  settled(call: RemoteCall): void;
}

export class QueueBackend implements CallBackend {
  /** Inbound calls by session and id (only {@link RemoteCall}s are added). */
  readonly registry = new InFlightRegistry();
  private readonly counters: BackendStats = { completed: 0, cancelled: 0, failed: 0, timedOut: 0, running: 0, stopping: 0, queued: 0, hardKilled: 0, lateCancelsIgnored: 0, unknownCancelsIgnored: 0, logsDropped: 0, reportsReceived: 0, reportsDiscarded: 0, inFlight: 0, threads: 0 };
  private readonly context: RemoteContext;
  private sweeper: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(
    readonly tools: ReadonlyMap<string, ToolDefinition>,
    readonly frontId: string,
    private readonly cmd: Redis,
    private readonly sub: Redis,
    private readonly queue: Queue,
    private readonly liveness: Liveness,
    states: JobStates,
    options: QueueBackendOptions,
    private readonly lostHostTimeoutMs: number,
  ) {
    this.context = {
      frontId,
      redisUrl: options.redisUrl,
      states,
      queue,
      tools,
      counters: this.counters,
      submitTimeoutMs: options.submitTimeoutMs ?? 2000,
      connected: () => cmd.status === 'ready',
      byJob: new Map(),
      settled: (call) => this.registry.remove(call),
    };
  }

  /** Loads the tool metadata and connects; does not wait for Redis (calls fail with a clear error until it is reachable). */
  static async create(options: QueueBackendOptions): Promise<QueueBackend> {
    const tools = await loadToolCatalog(options.toolModules ?? [], options.builtins ?? true);
    const name = options.queue ?? DEFAULT_QUEUE;
    const frontId = randomBytes(6).toString('hex');
    // Fail fast while Redis is away instead of queueing commands for later; reconnect on its own.
    const retry = { retryStrategy: (times: number) => Math.min(times * 100, 1000) };
    const cmd = new Redis(options.redisUrl, { ...retry, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    const sub = new Redis(options.redisUrl, { ...retry, maxRetriesPerRequest: null });
    for (const c of [cmd, sub]) c.on('error', () => undefined); // the status says it; calls report it
    const queue = new Queue(name, { connection: { url: options.redisUrl, ...retry } });
    queue.on('error', () => undefined);
    const states = new JobStates(cmd, name);
    const liveness = new Liveness(cmd, states.keys.front(frontId), LIVENESS_TTL_MS, LIVENESS_REFRESH_MS);
    const backend = new QueueBackend(tools, frontId, cmd, sub, queue, liveness, states, options, options.lostHostTimeoutMs ?? LOST_HOST_TIMEOUT_MS);
    sub.on('message', (_channel: string, text: string) => backend.onMessage(text));
    void sub.subscribe(states.keys.frontChannel(frontId)).catch(() => undefined); // ioredis resubscribes after a reconnect
    cmd.on('ready', () => void liveness.start().catch(() => undefined)); // also after a Redis restart
    backend.sweeper = setInterval(() => backend.sweep(), LIVENESS_REFRESH_MS);
    backend.sweeper.unref();
    return backend;
  }

  /** Waits until Redis is reachable and the front end's liveness key exists (for callers that want to start only then). */
  async ready(timeoutMs = 10_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (this.cmd.status !== 'ready' || (await this.cmd.exists(this.context.states.keys.front(this.frontId)).catch(() => 0)) === 0) {
      if (Date.now() > end) throw new Error(`Redis at ${this.context.redisUrl} is not reachable`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await this.queue.waitUntilReady();
  }

  reserve(session: string, id: RequestId): RemoteCall {
    if (this.closed) throw new ExecutorClosedError();
    const call = new RemoteCall(this.context, session, id);
    if (!this.registry.add(call)) throw new DuplicateRequestError(session, id);
    return call;
  }

  cancel(session: string, id: RequestId, reason?: string): CancelResult {
    const call = this.registry.get('inbound', session, id) as RemoteCall | undefined;
    if (!call) {
      this.counters.unknownCancelsIgnored++;
      return 'unknown';
    }
    return call.cancel(reason);
  }

  /** {@link QueueBackend.cancel}, resolved once Redis has decided the race (see {@link RemoteCall.cancelDecided}). */
  cancelDecided(session: string, id: RequestId, reason?: string): Promise<CancelResult> {
    const call = this.registry.get('inbound', session, id) as RemoteCall | undefined;
    if (call) return call.cancelDecided(reason);
    this.counters.unknownCancelsIgnored++;
    return Promise.resolve('unknown');
  }

  cancelSession(session: string, reason: string): void {
    for (const call of this.registry.inSession('inbound', session) as RemoteCall[]) call.cancel(reason);
  }

  callsInFlight(session: string): number {
    return this.registry.inSession('inbound', session).length;
  }

  stats(): BackendStats {
    let running = 0;
    for (const call of this.registry.all()) if (call.state === 'running') running++;
    return { ...this.counters, running, inFlight: this.registry.size };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweeper);
    const calls = this.registry.all() as RemoteCall[];
    for (const call of calls) call.cancel('front end closing');
    await Promise.race([Promise.all(calls.map((c) => c.done)), new Promise((r) => setTimeout(r, 2000))]);
    await this.liveness.stop();
    await this.queue.close().catch(() => undefined);
    this.sub.disconnect();
    this.cmd.disconnect();
  }

  private onMessage(text: string): void {
    const message = parseFrontMessage(text);
    if (message) this.context.byJob.get(message.j)?.receive(message);
  }

  /** Once a second: delivers outcomes whose message was lost, retries cancels, and answers jobs whose host is gone. */
  private sweep(): void {
    if (this.cmd.status !== 'ready') return;
    for (const call of this.context.byJob.values()) void call.check(this.lostHostTimeoutMs).catch(() => undefined);
  }
}
