/**
 * What every {@link CallBackend} writes the same way, written once (as
 * undici's dispatchers share `DispatcherBase`): the registry-backed
 * reserve/requestCancel/cancelSession/callsInFlight, the argument check
 * before a call is queued, the settle counting, and the turn rule for
 * reports before a response (typescript-sdk#2580).
 */
import { DuplicateRequestError, ExecutorClosedError } from '../errors.js';
import { describeIssues } from '../issues.js';
import { InFlightRegistry, type InFlightEntry, type RequestId } from '../wire/registry.js';
import type { ToolDefinition } from '../stages/tool.js';
import type { BackendStats, CallHandle, CancelResult, JobOutcome, StartOptions } from './backend.js';
import type { CancelSource } from '../state/cancel-source.js';

/** A call a {@link CallTable} holds: a handle in the registry that can be asked to cancel. */
export interface TableCall extends CallHandle, Omit<InFlightEntry, 'state'> {
  /** The backend's own cancel, resolving with its decision; `source` goes to its span (and the metrics' count). */
  requestCancel(reason: string | undefined, source: CancelSource): Promise<CancelResult>;
}

/** The settle counters every backend keeps. */
export type SettleCounters = Pick<BackendStats, 'completed' | 'failed' | 'timedOut' | 'cancelled'>;

/**
 * The registry half of a backend: calls by session and id, and the
 * operations that only look them up. A subclass makes the calls.
 */
export abstract class CallTable<C extends TableCall> {
  /** Inbound calls by session and id. */
  readonly registry = new InFlightRegistry();
  protected closed = false;
  protected abstract readonly unknownCancels: { unknownCancelsIgnored: number };

  /** Makes a call for a {@link CallTable.reserve}. */
  protected abstract newCall(session: string, id: RequestId): C;

  /** {@link CallBackend.reserve}. */
  reserve(session: string, id: RequestId): C {
    if (this.closed) throw new ExecutorClosedError();
    const call = this.newCall(session, id);
    if (!this.registry.add(call)) throw new DuplicateRequestError(session, id);
    return call;
  }

  /** {@link CallBackend.requestCancel}. */
  requestCancel(
    session: string,
    id: RequestId,
    reason?: string,
    source: CancelSource = 'notification',
  ): Promise<CancelResult> {
    const call = this.registry.get('inbound', session, id) as C | undefined;
    if (call) return call.requestCancel(reason, source);
    this.unknownCancels.unknownCancelsIgnored++;
    return Promise.resolve('unknown');
  }

  /** {@link CallBackend.cancelSession}. */
  cancelSession(session: string, reason: string, source: CancelSource = 'session_close'): void {
    for (const call of this.registry.inSession('inbound', session) as C[]) void call.requestCancel(reason, source);
  }

  /** {@link CallBackend.callsInFlight}. */
  callsInFlight(session: string): number {
    return this.registry.inSession('inbound', session).length;
  }

  /** The calls in flight now. */
  protected calls(): C[] {
    return this.registry.all() as C[];
  }
}

/** The tool and its parsed arguments, or the failed outcome a call gets for a bad start. */
export function checkStart(
  tools: ReadonlyMap<string, ToolDefinition>,
  options: StartOptions,
): { readonly tool: ToolDefinition; readonly args: unknown } | Extract<JobOutcome, { kind: 'failed' }> {
  const tool = tools.get(options.tool);
  if (!tool) return { kind: 'failed', code: 'unknown_tool', message: `unknown tool '${options.tool}'` };
  const parsed = tool.input.safeParse(options.args ?? {});
  if (!parsed.success)
    return {
      kind: 'failed',
      code: 'invalid_arguments',
      message: `invalid arguments for tool '${tool.name}': ${describeIssues(parsed.error)}`,
    };
  return { tool, args: parsed.data };
}

/** Counts a settled outcome once. */
export function countSettled(counters: SettleCounters, outcome: JobOutcome): void {
  if (outcome.kind === 'completed') counters.completed++;
  else if (outcome.kind === 'failed') counters.failed++;
  else if (outcome.kind === 'timedOut') counters.timedOut++;
  else counters.cancelled++;
}

/**
 * The SDK client (1.x, typescript-sdk#2580) drops a progress notification
 * that it reads in the same chunk as the response. Reports handed on in one
 * turn leave in that turn's write (stdio); a response after them must wait
 * for the next turn.
 */
export class ReportTurn {
  private reported = false;

  /** A report is being handed on now. */
  mark(): void {
    if (this.reported) return;
    this.reported = true;
    setImmediate(() => (this.reported = false));
  }

  /** Runs `fn` now, or in the next turn if a report went out in this one. */
  then(fn: () => void): void {
    if (this.reported) setImmediate(fn);
    else fn();
  }
}
