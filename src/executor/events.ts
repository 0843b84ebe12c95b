/**
 * A job's life as diagnostics_channel events, for metrics (src/ops). Nothing
 * is built or sent while no one subscribes: each publish is behind
 * `hasSubscribers`, one property read on the hot path.
 */
import { channel } from 'node:diagnostics_channel';
import type { JobOutcome } from '../backend/backend.js';
import type { CancelSource } from '../state/cancel-source.js';
import type { MeasuredGap } from './checkpoint-gaps.js';

/** What {@link JOB_EVENTS} carries; `job` is the same object from `start` to `settled`. */
export type JobEvent =
  /** A call was handed to the executor (`tool` as the client named it, known or not). */
  | { readonly type: 'start'; readonly job: object; readonly tool: string }
  /** It left the admission queue and is on a worker thread. */
  | { readonly type: 'running'; readonly job: object }
  /** A cancel (or its deadline: source `deadline`) won while it ran; its worker has not returned yet. */
  | {
      readonly type: 'stopped';
      readonly job: object;
      readonly kind: 'cancelled' | 'timedOut';
      readonly source: CancelSource;
    }
  /**
   * Its outcome settled (after the worker returned or was replaced); `source` is the winning cancel's, if one won,
   * and `checkpointGap` the longest time its stages went without a cancellation check, when the worker measured it.
   */
  | {
      readonly type: 'settled';
      readonly job: object;
      readonly outcome: JobOutcome;
      readonly source: CancelSource | undefined;
      readonly checkpointGap?: MeasuredGap;
    };

/** The channel every local executor in the process publishes on. */
export const JOB_EVENTS = channel('mcp-cancel-pool:job');
