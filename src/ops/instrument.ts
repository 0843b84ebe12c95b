/**
 * The front end's metrics seam: a {@link CallBackend} that passes everything
 * to the real one and notes, per call, who asked for its cancel, so that a
 * cancel that wins is counted once by its source when the outcome settles.
 * Sources are told apart by the reason given, and by who calls: `cancelSession`
 * is a session (or the server) closing unless its reason says a 2026 exchange
 * closed (a closed stream); `requestCancel` carries the reason its caller gave.
 */
import type { CallBackend, CallHandle, CallState, JobOutcome, StartOptions } from '../backend/backend.js';
import type { RequestId } from '../wire/registry.js';
import type { CancelSource, Metrics } from './metrics.js';

/** Reasons our own callers pass to {@link CallBackend.requestCancel}; anything else came from a client's `notifications/cancelled`. */
const SOURCE_OF_REASON: Readonly<Record<string, CancelSource>> = {
  'tasks/cancel': 'tasks_cancel',
  'client disconnected': 'closed_stream',
  'session closed': 'session_close',
  // A stdio connection or a 2025 session's transport closing (a 2026 exchange closing says 'client disconnected').
  'transport closed': 'session_close',
  'task expired': 'task_expired',
  'task lease expired': 'task_lease',
};

/** Options for {@link instrumentBackend}. */
export interface InstrumentOptions {
  /** Count calls by tool and outcome here (no local pool whose job events count them: `serve --redis`). */
  readonly countCalls: boolean;
}

/** Wraps `backend`; the wrapper is what the server and the task runner get. */
export function instrumentBackend<B extends CallBackend>(
  backend: B,
  metrics: Metrics,
  options: InstrumentOptions,
): CallBackend {
  /** Per session, per id: the calls still in flight, each holding the source of the first cancel asked for it. */
  const live = new Map<string, Map<RequestId, TrackedCall>>();
  const note = (session: string, id: RequestId, source: CancelSource) => {
    const call = live.get(session)?.get(id);
    if (call && call.source === undefined) call.source = source;
  };
  // One function for every call (made once here, not per call: this seam is on every call's path).
  const settled: Settled = (call, tool, outcome) => {
    const calls = live.get(call.liveSession);
    if (calls?.get(call.liveId) === call) {
      calls.delete(call.liveId);
      if (calls.size === 0) live.delete(call.liveSession);
    }
    if (options.countCalls) metrics.settled(backend.tools.has(tool) ? tool : '(unknown)', outcome);
    if (outcome.kind === 'cancelled') metrics.cancels.inc({ source: call.source ?? 'shutdown' });
    else if (outcome.kind === 'timedOut') metrics.cancels.inc({ source: 'deadline' });
  };
  return {
    tools: backend.tools,
    reserve(session, id) {
      const call = new TrackedCall(backend.reserve(session, id), session, id, settled);
      let calls = live.get(session);
      if (!calls) live.set(session, (calls = new Map<RequestId, TrackedCall>()));
      calls.set(id, call);
      return call;
    },
    requestCancel(session, id, reason) {
      note(session, id, sourceOf(reason));
      return backend.requestCancel(session, id, reason);
    },
    cancelSession(session, reason) {
      // A 2026 exchange closing unanswered is a closed stream; any other connection closing ends its session.
      const source = (reason !== undefined && SOURCE_OF_REASON[reason]) || 'session_close';
      for (const id of live.get(session)?.keys() ?? []) note(session, id, source);
      return backend.cancelSession(session, reason);
    },
    callsInFlight: (session) => backend.callsInFlight(session),
    stats: () => backend.stats(),
    close: () => backend.close(),
  };
}

type Settled = (call: TrackedCall, tool: string, outcome: JobOutcome) => void;

/** The handle as the server sees it: one object per call (no closures per call); `settled` hears its tool and outcome once. */
class TrackedCall implements CallHandle {
  /** Who asked first for this call's cancel, if anyone did. */
  source: CancelSource | undefined;
  private tool = '';
  private done = false;

  constructor(
    private readonly handle: CallHandle,
    /** The keys it was reserved under, which its entry in the seam's map has. */
    readonly liveSession: string,
    readonly liveId: RequestId,
    private readonly settled: Settled,
  ) {}

  get session(): string {
    return this.handle.session;
  }

  get id(): RequestId {
    return this.handle.id;
  }

  get state(): CallState {
    return this.handle.state;
  }

  start(options: StartOptions): Promise<JobOutcome> {
    this.tool = options.tool;
    const outcome = this.handle.start(options);
    void outcome.then(
      (o) => this.finish(o),
      () => undefined,
    );
    return outcome;
  }

  abandon(): void {
    this.handle.abandon();
    this.finish({ kind: 'failed', code: 'rejected', message: 'abandoned' });
  }

  private finish(outcome: JobOutcome): void {
    if (this.done) return;
    this.done = true;
    this.settled(this, this.tool, outcome);
  }
}

function sourceOf(reason: string | undefined): CancelSource {
  return (reason !== undefined && SOURCE_OF_REASON[reason]) || 'notification';
}
