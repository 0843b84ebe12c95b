/**
 * From what the pool reported to the job's outcome. The state word has
 * already decided who won; the pool's report only says what the winner owes.
 */
import type { JobOutcome } from '../backend/backend.js';
import type { PoolOutcome } from '../pool/pool.js';
import { isBareResult } from '../pool/protocol.js';
import type { JobStateName } from '../state/job-state.js';

/**
 * The outcome of a job whose worker returned, given the state word after the
 * pool's report (`responding`: completion won; `timedOut`; otherwise cancelled).
 */
export function outcomeOf(
  result: PoolOutcome,
  state: JobStateName,
  timeoutMs: number,
  hardKilled: boolean,
): JobOutcome {
  switch (state) {
    case 'responding':
      if (isBareResult(result)) return { kind: 'completed', result };
      if (result.kind === 'result') return { kind: 'completed', result: result.result };
      if (result.kind === 'error')
        return {
          kind: 'failed',
          code: 'stage',
          stage: result.stage,
          message: `stage '${result.stage}' failed: ${result.message}`,
        };
      return { kind: 'failed', code: 'crash', message: 'worker ended without a result' };
    case 'timedOut':
      return { kind: 'timedOut', timeoutMs, hardKilled };
    default:
      return { kind: 'cancelled', from: 'running', hardKilled };
  }
}

/** The worker died before it claimed the response, and the main thread claimed it on its behalf. */
export function crashed(message: string): JobOutcome {
  return { kind: 'failed', code: 'crash', message: `worker failed while running the tool: ${message}` };
}

/** The state a settled job shows: the state word's last word, kept after its slot was released. */
export function settledState(outcome: JobOutcome): Exclude<JobStateName, 'free'> {
  return outcome.kind === 'failed' ? 'failed' : outcome.kind;
}

/** Whether a cancel or the deadline won while the job was on a thread (counted at that moment, not at settle). */
export function stoppedWhileRunning(outcome: JobOutcome): boolean {
  return outcome.kind === 'timedOut' || (outcome.kind === 'cancelled' && outcome.from === 'running');
}
