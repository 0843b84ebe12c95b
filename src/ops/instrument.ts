/**
 * The front end's metrics seam: a {@link CallBackend} that passes everything
 * to the real one and notes, per call, who asked for its cancel, so that a
 * cancel that wins is counted once by its source when the outcome settles.
 * Each cancel names its source where it is asked (src/state/cancel-source.ts):
 * a `requestCancel` without one is a client's notification, a `cancelSession`
 * without one a session closing.
 */
import type { CallBackend, CallHandle, CallState, JobOutcome, StartOptions } from '../backend/backend.js';
import type { RequestId } from '../wire/registry.js';
import type { Metrics } from './metrics.js';
import type { CancelSource } from '../state/cancel-source.js';

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
    requestCancel(session, id, reason, source = 'notification') {
      note(session, id, source);
      return backend.requestCancel(session, id, reason, source);
    },
    cancelSession(session, reason, source = 'session_close') {
      for (const id of live.get(session)?.keys() ?? []) note(session, id, source);
      return backend.cancelSession(session, reason, source);
    },
    callsInFlight: (session) => backend.callsInFlight(session),
    stats: () => backend.stats(),
    ...(backend.queuedOf && { queuedOf: (turn: string) => backend.queuedOf!(turn) }),
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
