/**
 * The front end's metrics seam: a {@link CallBackend} that passes everything
 * to the real one and notes, per call, who asked for its cancel, so that a
 * cancel that wins is counted once by its source when the outcome settles.
 * Sources are told apart by who calls: `cancelSession` is a session (or the
 * server) closing; `requestCancel` carries the reason its caller gave.
 */
import type { CallBackend, CallHandle, JobOutcome, StartOptions } from '../backend/backend.js';
import type { RequestId } from '../wire/registry.js';
import type { CancelSource, Metrics } from './metrics.js';

/** Reasons our own callers pass to {@link CallBackend.requestCancel}; anything else came from a client's `notifications/cancelled`. */
const SOURCE_OF_REASON: Readonly<Record<string, CancelSource>> = {
  'tasks/cancel': 'tasks_cancel',
  'client disconnected': 'closed_stream',
  'session closed': 'session_close',
  'task expired': 'task_expired',
};

/** Options for {@link instrumentBackend}. */
export interface InstrumentOptions {
  /** Count calls by tool and outcome here (no local pool whose job events count them: `serve --redis`). */
  readonly countCalls: boolean;
}

/** Wraps `backend`; the wrapper is what the server and the task runner get. */
export function instrumentBackend<B extends CallBackend>(backend: B, metrics: Metrics, options: InstrumentOptions): CallBackend {
  /** Per session, per id: the source of the first cancel asked for a call still in flight. */
  const live = new Map<string, Map<RequestId, { source?: CancelSource }>>();
  const note = (session: string, id: RequestId, source: CancelSource) => {
    const entry = live.get(session)?.get(id);
    if (entry && entry.source === undefined) entry.source = source;
  };
  return {
    tools: backend.tools,
    reserve(session, id) {
      const handle = backend.reserve(session, id);
      const entry: { source?: CancelSource } = {};
      let calls = live.get(session);
      if (!calls) live.set(session, (calls = new Map()));
      calls.set(id, entry);
      return tracked(handle, (tool, outcome) => {
        const calls = live.get(session);
        if (calls?.get(id) === entry) {
          calls.delete(id);
          if (calls.size === 0) live.delete(session);
        }
        if (options.countCalls) metrics.settled(backend.tools.has(tool) ? tool : '(unknown)', outcome);
        if (outcome.kind === 'cancelled') metrics.cancels.inc({ source: entry.source ?? 'shutdown' });
        else if (outcome.kind === 'timedOut') metrics.cancels.inc({ source: 'deadline' });
      });
    },
    requestCancel(session, id, reason) {
      note(session, id, sourceOf(reason));
      return backend.requestCancel(session, id, reason);
    },
    cancelSession(session, reason) {
      for (const id of live.get(session)?.keys() ?? []) note(session, id, 'session_close');
      return backend.cancelSession(session, reason);
    },
    callsInFlight: (session) => backend.callsInFlight(session),
    stats: () => backend.stats(),
    close: () => backend.close(),
  };
}

function sourceOf(reason: string | undefined): CancelSource {
  return (reason !== undefined && SOURCE_OF_REASON[reason]) || 'notification';
}

/** The handle as the server sees it; `settled` hears the tool and outcome once. */
function tracked(handle: CallHandle, settled: (tool: string, outcome: JobOutcome) => void): CallHandle {
  let tool = '';
  let done = false;
  const finish = (outcome: JobOutcome) => {
    if (done) return;
    done = true;
    settled(tool, outcome);
  };
  return {
    get session() {
      return handle.session;
    },
    get id() {
      return handle.id;
    },
    get state() {
      return handle.state;
    },
    start(options: StartOptions) {
      tool = options.tool;
      const outcome = handle.start(options);
      void outcome.then(finish, () => undefined);
      return outcome;
    },
    abandon() {
      handle.abandon();
      finish({ kind: 'failed', code: 'rejected', message: 'abandoned' });
    },
  };
}
