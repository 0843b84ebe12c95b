/**
 * A 2026 task's questions to the client (the tasks extension's
 * `input_required`): `tasks/get` shows the outstanding ones as
 * `inputRequests`, each answered by the client's own handler for its method
 * (the elicitation, sampling or roots handler a 2025 server-to-client request
 * or a 2026 multi-round-trip call would run), and the answer goes back in a
 * `tasks/update` with `inputResponses`. Keys are unique over a task's life
 * (the extension), so a question shown again by a later poll is asked once.
 * Once stopped (our cancel, the task ended, the connection closed) every
 * handler still at work sees its signal fire, and no answer is sent.
 */
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';

/**
 * Answers one input request with the client's handler for `method`; rejects
 * if the client has none. `key` is the request's `inputRequests` key (it has
 * no wire id); `signal` fires when the answer is no longer wanted.
 */
export type InputDispatch = (
  key: string,
  method: string,
  params: Record<string, unknown> | undefined,
  signal: AbortSignal,
) => Promise<Record<string, unknown>>;

export interface TaskInputsHooks {
  /** Sends `tasks/update` with these responses; resolves once acknowledged. */
  readonly update: (responses: Record<string, Record<string, unknown>>) => Promise<unknown>;
  /** An update was acknowledged: the task may have moved on. */
  readonly answered: () => void;
  /** A handler failed or its update was refused: the task cannot go on. */
  readonly failed: (error: Error) => void;
}

export class TaskInputs {
  /** Keys already handed to a handler. */
  private readonly asked = new Set<string>();
  private readonly stopper = new AbortController();

  constructor(
    private readonly dispatch: InputDispatch,
    private readonly hooks: TaskInputsHooks,
  ) {}

  /** The `inputRequests` of an `input_required` status: each new key goes to its handler. */
  offer(inputRequests: unknown): void {
    if (this.stopper.signal.aborted || !isObject(inputRequests)) return;
    for (const [key, entry] of Object.entries(inputRequests)) {
      if (this.asked.has(key)) continue; // the same question on a later poll
      this.asked.add(key);
      void this.answer(key, entry);
    }
  }

  /** No answer is wanted any more: handlers at work see their signal fire, nothing more is sent. */
  stop(reason: unknown): void {
    this.stopper.abort(reason);
  }

  private async answer(key: string, entry: unknown): Promise<void> {
    const { signal } = this.stopper;
    try {
      if (!isObject(entry) || typeof entry.method !== 'string') {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `input request ${JSON.stringify(key)} of the task has no method`,
        );
      }
      const result = await this.dispatch(key, entry.method, isObject(entry.params) ? entry.params : undefined, signal);
      if (signal.aborted) return; // stopped while the handler worked: its answer is never sent
      await this.hooks.update({ [key]: result });
      if (!signal.aborted) this.hooks.answered();
    } catch (error) {
      if (!signal.aborted) this.hooks.failed(error instanceof Error ? error : new Error(String(error)));
    }
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
