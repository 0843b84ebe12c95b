/**
 * Parked 2026 calls shared by the front ends of one cluster (with `--redis`:
 * remote/front/parking.ts). A retry carrying a `requestState` may reach any front
 * end (a load balancer's round robin); whichever it reaches adopts the call
 * in one atomic step, so exactly one retry of a state resumes its call, and
 * a state replayed anywhere finds nothing. The front end that parked the
 * call runs its --input-wait-ms timer, and its expiry must win that same
 * step ({@link SharedParking.unpark}) before it cancels the job.
 */
import type { CallHandle } from '../backend/backend.js';
import type { KeyedQuestion } from './questions.js';

/** One open question of a parked call, under the key its `inputRequests` gave it. */
export type ParkedQuestion = KeyedQuestion;

/** What a front end needs to resume a call parked by another. */
export interface ParkedCall {
  /** Who may resume it (the `requestState` is bound to the same caller). */
  readonly caller: string;
  readonly tool: string;
  readonly questions: readonly ParkedQuestion[];
  /** The number of the call's next key (keys are never reused over a call's life). */
  readonly nextKey: number;
  /** The first round's server span as a W3C traceparent, when traced: the rounds resumed elsewhere join its trace. */
  readonly firstRound?: string;
}

/** Why an adoption was refused; `reason` is `data.reason` on the wire. */
export interface AdoptRefusal {
  readonly reason: 'used' | 'gone' | 'forged';
  readonly message: string;
}

/** Parked calls any front end of the cluster can resume; see the module comment. */
export interface SharedParking {
  /**
   * The cluster these parked calls are shared in (with `--redis`, the queue):
   * a `requestState` issued in another scope with the same key is refused as
   * foreign, its call being parked elsewhere.
   */
  readonly scope: string;
  /** Shares the call parked under `wait` for `ttlMs`; false if it could not be (then only this front end resumes it). */
  share(wait: string, call: CallHandle, parked: ParkedCall, ttlMs: number): Promise<boolean>;
  /**
   * The one adoption of `wait` into `handle`: the call as it was parked here,
   * or a fresh reservation of this front end that takes over the job parked
   * elsewhere. Never more than one adoption of a wait wins, here or anywhere.
   */
  adopt(wait: string, handle: CallHandle): Promise<ParkedCall | AdoptRefusal>;
  /** The parking front end's expiry or cancel of `wait`: true if it won over every adoption (the job is then its to cancel). */
  unpark(wait: string): Promise<boolean>;
  /**
   * The first round's traceparent of the call parked under `wait`, read
   * without adopting it (a retry's span starts before its adoption is
   * decided); undefined when it has none or is gone.
   */
  firstRoundOf?(wait: string): Promise<string | undefined>;
}
