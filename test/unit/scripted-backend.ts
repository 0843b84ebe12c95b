/**
 * An in-process CallBackend for the unit layer: no worker runs anything. Each started call waits until the test
 * says how it ends (`complete`, `fail`, `ask`), and every race is decided on a real {@link StateSlab} word, as the
 * local pool decides it: a cancel wins only from queued or running, a completion only from running.
 */
import type {
  CallBackend,
  CallHandle,
  CallState,
  CancelResult,
  ClientRequestHandler,
  JobOutcome,
  StartOptions,
  BackendStats,
} from '../../dist/src/backend/backend.js';
import type { ToolDefinition } from '../../dist/src/stages/tool.js';
import { JobState, StateSlab, type SlotRef } from '../../dist/src/state/job-state.js';

type RequestId = string | number;

/** One call, from reserve to its outcome. */
export class ScriptedCall implements CallHandle {
  options: StartOptions | undefined;
  private settle: ((outcome: JobOutcome) => void) | undefined;
  private readonly abort = new AbortController();
  outcome: Promise<JobOutcome> | undefined;

  constructor(
    private readonly backend: ScriptedBackend,
    readonly session: string,
    readonly id: RequestId,
    readonly ref: SlotRef,
  ) {}

  get state(): CallState {
    const s = this.backend.slab.read(this.ref);
    return s === 'free' ? 'completed' : s;
  }

  start(options: StartOptions): Promise<JobOutcome> {
    this.options = options;
    this.backend.slab.transition(this.ref, JobState.queued, JobState.running);
    this.outcome = new Promise((resolve) => (this.settle = resolve));
    return this.outcome;
  }

  abandon(): void {
    this.backend.forget(this);
  }

  /** The stage asks the client through its handler, with the job's stop signal. */
  ask(
    method: Parameters<ClientRequestHandler>[0],
    params: Record<string, unknown> = {},
  ): Promise<Record<string, unknown>> {
    return this.options!.onClientRequest!(method, params, this.abort.signal);
  }

  /** Completion's side of the race: true if it won (running → responding → completed). */
  complete(text = 'done'): boolean {
    const slab = this.backend.slab;
    if (!slab.transition(this.ref, JobState.running, JobState.responding)) return false;
    slab.transition(this.ref, JobState.responding, JobState.completed);
    this.end({ kind: 'completed', result: { content: [{ type: 'text', text }] } });
    return true;
  }

  /** A stage failure, if completion's side wins. */
  fail(message = 'boom'): boolean {
    const slab = this.backend.slab;
    if (!slab.transition(this.ref, JobState.running, JobState.responding)) return false;
    slab.transition(this.ref, JobState.responding, JobState.failed);
    this.end({ kind: 'failed', message, code: 'stage' });
    return true;
  }

  /** The cancel won: the job's signal aborts and it settles cancelled. */
  cancelled(from: 'queued' | 'running'): void {
    this.abort.abort();
    this.end({ kind: 'cancelled', from, hardKilled: false });
  }

  private end(outcome: JobOutcome): void {
    this.settle?.(outcome);
    this.backend.forget(this);
  }
}

/** The backend; `calls` holds every call reserved, settled or not. */
export class ScriptedBackend implements CallBackend {
  readonly slab = new StateSlab(256);
  readonly tools = new Map<string, ToolDefinition>();
  readonly calls: ScriptedCall[] = [];
  readonly cancels: { session: string; id: RequestId; reason: string | undefined; result: CancelResult }[] = [];
  private readonly live = new Map<string, ScriptedCall>();

  reserve(session: string, id: RequestId): ScriptedCall {
    const call = new ScriptedCall(this, session, id, this.slab.allocate());
    this.live.set(key(session, id), call);
    this.calls.push(call);
    return call;
  }

  /** The call reserved under this key, settled or not. */
  call(session: string, id: RequestId): ScriptedCall {
    const found = this.calls.findLast((c) => c.session === session && c.id === id);
    if (!found) throw new Error(`no call ${session}/${id}`);
    return found;
  }

  async requestCancel(session: string, id: RequestId, reason?: string): Promise<CancelResult> {
    const call = this.live.get(key(session, id));
    let result: CancelResult = 'unknown';
    if (call) {
      const from = this.slab.tryCancel(call.ref);
      result = from ? `cancelled-${from}` : 'too-late';
      if (from) call.cancelled(from);
    }
    this.cancels.push({ session, id, reason, result });
    return result;
  }

  cancelSession(session: string, reason: string): void {
    for (const c of [...this.live.values()])
      if (c.session === session) void this.requestCancel(c.session, c.id, reason);
  }

  callsInFlight(session: string): number {
    return [...this.live.values()].filter((c) => c.session === session).length;
  }

  /** Counts derived from the calls' states (the gauges the local pool keeps; the rest stay 0 here). */
  stats(): BackendStats {
    const of = (state: CallState) => this.calls.filter((c) => c.state === state).length;
    const cancels = (result: CancelResult) => this.cancels.filter((c) => c.result === result).length;
    return {
      childrenStarted: 0,
      childrenKilled: 0,
      childrenAlive: 0,
      childrenZombies: 0,
      childrenSync: 0,
      completed: of('completed'),
      cancelled: of('cancelled'),
      failed: of('failed'),
      timedOut: of('timedOut'),
      running: of('running'),
      stopping: 0,
      queued: of('queued'),
      hardKilled: 0,
      lateCancelsIgnored: cancels('too-late'),
      unknownCancelsIgnored: cancels('unknown'),
      logsDropped: 0,
      reportsReceived: 0,
      reportsDiscarded: 0,
      inFlight: this.live.size,
      threads: 0,
    };
  }

  async close(): Promise<void> {
    for (const c of [...this.live.values()]) await this.requestCancel(c.session, c.id, 'closed');
  }

  forget(call: ScriptedCall): void {
    if (this.live.get(key(call.session, call.id)) === call) this.live.delete(key(call.session, call.id));
  }
}

const key = (session: string, id: RequestId) => `${session}\u0000${typeof id}:${id}`;

/** Lets every pending promise callback and one macrotask run. */
export const settled = () => new Promise<void>((resolve) => setImmediate(resolve));
