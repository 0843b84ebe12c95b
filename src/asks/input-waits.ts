/**
 * The parked 2026 calls of one process, shared by every connection and
 * exchange: each waits for the client's retry under a random wait id that its
 * signed `requestState` carries. A state opens its wait once (single use:
 * the spec's "consumed at most once" is ours to enforce); a wait whose retry
 * does not come within `waitMs` is cancelled through the backend, by the same
 * compare-and-set as any cancel, so its job stops and its slot is freed.
 *
 * Parked jobs are reserved under {@link INPUT_WAIT_SESSION}, not under the
 * connection or exchange that started them: a 2026 HTTP exchange ends with
 * its `input_required` answer, and its session's cancel must not reach a job
 * that waits for a retry on another exchange.
 */
import { randomUUID } from 'node:crypto';
import type { CallBackend, CallHandle } from '../backend/backend.js';
import { InputCall, type Exchange } from './input-call.js';
import { RequestStateSigner, isRefusal, type StateRefusal } from './request-state.js';
import type { SharedParking } from './shared-parking.js';
import type { CancelSource } from '../state/cancel-source.js';

/** The backend session of every 2026 call of a tool that may ask the client. */
export const INPUT_WAIT_SESSION = 'input-waits';

/** Options for {@link InputWaits}. */
export interface InputWaitsOptions {
  /**
   * HMAC-SHA256 key for `requestState` (at least 32 bytes).
   * @default 32 random bytes, made at start-up (states verify in this process only)
   */
  readonly key?: Buffer;
  /**
   * How long a parked call waits for the client's retry before it is cancelled.
   * @default 60000
   */
  readonly waitMs?: number;
  /**
   * Parked calls shared by the front ends of a cluster (with `--redis`): a
   * retry on any of them resumes the call (see shared-parking.ts). Then
   * `key` must be the same on every front end.
   */
  readonly shared?: SharedParking;
}

/** Counters of `executor://stats`. */
export interface InputWaitStats {
  /** `input_required` answers sent (one per round). */
  inputRequired: number;
  /** Calls parked now, waiting for a retry (gauge). */
  inputWaiting: number;
  /** Retries that resumed a parked call. */
  inputRetries: number;
  /** Of those, retries that resumed a call parked by another front end (with --redis). */
  inputAdopted: number;
  /** Parked calls cancelled because no retry came within the wait. */
  inputWaitsExpired: number;
  /** Retries refused: a forged, altered, expired, replayed or foreign (issued by another process with the same key) `requestState`. */
  requestStatesRefused: number;
}

/** A refused retry: `reason` is stable (`data.reason` on the wire). */
export interface RetryRefusal {
  readonly reason: StateRefusal['code'] | 'used' | 'gone' | 'invalid_responses';
  readonly message: string;
}

/**
 * A retry whose state verified, with shared parking: the call may be parked
 * here (`local`) or on another front end; Redis decides in the handler
 * ({@link InputWaits.resume}), since only one retry of a state may resume it.
 */
export interface PendingClaim {
  readonly wait: string;
  readonly caller: string;
  readonly local: InputCall | undefined;
  /** Vets the retry's answers against the call's questions. */
  readonly check?: (input: InputCall) => string | undefined;
}

interface Parked {
  readonly input: InputCall;
  readonly caller: string;
  readonly timer: NodeJS.Timeout;
}

/**
 * The parked calls of one backend. Make one per process and hand the same
 * one to every server of that backend (serveStdio's and serveHttp's
 * `inputWaits`, the guard's), as the task runner is handed around.
 */
export class InputWaits {
  private readonly signer: RequestStateSigner;
  /** This process, as the issuer of a state whose call is parked here only (see StatePayload.issuer). */
  private readonly self = `process:${randomUUID()}`;
  private readonly shared: SharedParking | undefined;
  private readonly waitMs: number;
  private readonly parked = new Map<string, Parked>();
  private readonly counters = {
    inputRequired: 0,
    inputRetries: 0,
    inputAdopted: 0,
    inputWaitsExpired: 0,
    requestStatesRefused: 0,
  };

  constructor(
    private readonly backend: CallBackend,
    options: InputWaitsOptions = {},
  ) {
    this.signer = new RequestStateSigner(options.key);
    this.shared = options.shared;
    this.waitMs = options.waitMs ?? 60_000;
    if (!Number.isInteger(this.waitMs) || this.waitMs < 1)
      throw new RangeError(`input wait must be a positive integer of ms (got ${this.waitMs})`);
  }

  /** Reserves a 2026 call of a tool that may ask the client (see the module comment). */
  reserve(): CallHandle {
    return this.backend.reserve(INPUT_WAIT_SESSION, randomUUID());
  }

  /** Parks `input` for `caller`'s retry (shared first, when it is); returns the `requestState` to send. */
  async park(input: InputCall, caller: string, wait: string = randomUUID()): Promise<string> {
    // Shared before the answer leaves: the retry may reach another front end at once.
    const shared = this.shared
      ? await this.shared
          .share(
            wait,
            input.call,
            {
              caller,
              tool: input.tool,
              questions: input.questions(),
              nextKey: input.keyCounter,
              ...(input.firstRound !== undefined && { firstRound: input.firstRound }),
            },
            this.waitMs,
          )
          .catch(() => false)
      : false;
    const issuer = shared ? this.shared!.scope : this.self;
    const expiresAt = Date.now() + this.waitMs;
    const timer = setTimeout(() => this.expire(wait), this.waitMs);
    timer.unref(); // a wait never keeps the process alive
    this.parked.set(wait, { input, caller, timer });
    this.counters.inputRequired++;
    return this.signer.sign({ wait, tool: input.tool, expiresAt, issuer }, caller);
  }

  /**
   * Opens `state` for `caller`'s retry of `tool`: the parked call, taken (no
   * second retry finds it), or why not. `check` vets the retry's answers
   * first: a retry it refuses leaves the call parked, for a correct retry.
   */
  claim(
    state: string,
    caller: string,
    tool: string,
    check?: (input: InputCall) => string | undefined,
  ): InputCall | RetryRefusal | PendingClaim {
    const opened = this.signer.open(state, caller, tool);
    if (isRefusal(opened)) {
      // After the expiry but before its timer ran: the wait ends now, as the timer would end it.
      if (opened.wait !== undefined) this.expire(opened.wait);
      return this.refuse(opened.code, opened.message);
    }
    let parked = this.parked.get(opened.wait);
    // Issued under the same key by another process (or another cluster): its call was never here, so it is not "used".
    if (!parked && opened.issuer !== this.self && opened.issuer !== this.shared?.scope) {
      const where = opened.issuer.startsWith('queue:')
        ? `the front ends of another cluster (queue '${opened.issuer.slice('queue:'.length)}')`
        : 'another server process';
      return this.refuse(
        'foreign',
        `requestState was issued by ${where} with the same key, not here: its call is parked there; retry it at the server that answered input_required`,
      );
    }
    if (parked && this.shared && !live(parked)) {
      // Adopted by a retry on another front end (this call let go), or ended: nothing of it is here any more.
      this.drop(opened.wait, parked);
      parked = undefined;
    }
    if (this.shared && (!parked || parked.caller === caller)) {
      const problem = parked && check?.(parked.input);
      if (problem) return this.refuse('invalid_responses', problem);
      return { wait: opened.wait, caller, local: parked?.input, ...(check && { check }) };
    }
    if (!parked || parked.caller !== caller)
      return this.refuse('used', 'requestState was already used by an earlier retry (each one resumes its call once)');
    const problem = check?.(parked.input);
    if (problem !== undefined) return this.refuse('invalid_responses', problem);
    this.parked.delete(opened.wait);
    clearTimeout(parked.timer);
    this.counters.inputRetries++;
    return parked.input;
  }

  /**
   * Decides a {@link PendingClaim} by the one adoption in Redis: the call
   * parked here, or the one parked elsewhere taken over into `fresh` (a
   * reservation of this front end) and resumed in `exchange`.
   */
  async resume(
    claim: PendingClaim,
    tool: string,
    fresh: CallHandle | undefined,
    exchange: Exchange,
  ): Promise<InputCall | RetryRefusal> {
    const handle = claim.local?.call ?? fresh;
    if (!this.shared || !handle)
      return this.refuse('used', 'requestState was already used by an earlier retry (each one resumes its call once)');
    const got = await this.shared
      .adopt(claim.wait, handle)
      .catch((e: unknown) => ({ reason: 'gone' as const, message: String(e) }));
    const here = this.parked.get(claim.wait);
    if ('reason' in got) {
      if (here) this.drop(claim.wait, here); // taken by a retry elsewhere: its job is that front end's now
      fresh?.abandon();
      return this.refuse(got.reason, got.message);
    }
    if (claim.local) {
      if (here) this.drop(claim.wait, here);
      this.counters.inputRetries++;
      return claim.local;
    }
    if (got.caller !== claim.caller || got.tool !== tool) {
      void this.backend.requestCancel(fresh!.session, fresh!.id, 'parked call of another caller', 'superseded');
      return this.refuse('forged', 'requestState names a call parked for another caller or tool');
    }
    const input = new InputCall(fresh!, exchange, got);
    const problem = claim.check?.(input);
    if (problem !== undefined) {
      await this.park(input, claim.caller, claim.wait); // ours now: parked here for a correct retry, anywhere
      return this.refuse('invalid_responses', problem);
    }
    this.counters.inputRetries++;
    this.counters.inputAdopted++;
    return input;
  }

  /**
   * The first round's traceparent of a retry's call, for its server span: the
   * parked call's own, or (parked on another front end) its shared record's.
   */
  firstRoundOf(claim: InputCall | PendingClaim): string | undefined | Promise<string | undefined> {
    if (claim instanceof InputCall) return claim.firstRound;
    if (claim.local) return claim.local.firstRound;
    return this.shared?.firstRoundOf?.(claim.wait);
  }

  /** A retry refused before its state could be opened (counted with the rest). */
  refuse(reason: RetryRefusal['reason'], message: string): RetryRefusal {
    this.counters.requestStatesRefused++;
    return { reason, message };
  }

  /** Cancels every parked call of `caller` (its connection closed: no retry can come). */
  cancelOwner(caller: string, reason: string, source: CancelSource): void {
    for (const [wait, p] of [...this.parked]) if (p.caller === caller) this.cancel(wait, p, reason, source);
  }

  /** The counters of `executor://stats` for the parked calls: those waiting now and what happened to the others. */
  stats(): InputWaitStats {
    // A call adopted by another front end's retry has let go here (its state reads cancelled): it waits no more.
    let waiting = 0;
    for (const p of this.parked.values()) if (live(p)) waiting++;
    return { ...this.counters, inputWaiting: waiting };
  }

  /** Stops the timers (the backend's close cancels the parked jobs). */
  close(): void {
    for (const p of this.parked.values()) clearTimeout(p.timer);
    this.parked.clear();
  }

  private expire(wait: string): void {
    const p = this.parked.get(wait);
    if (p) this.cancel(wait, p, `no retry within ${this.waitMs} ms (--input-wait-ms)`, 'input_wait');
  }

  private drop(wait: string, p: Parked): void {
    if (this.parked.get(wait) === p) this.parked.delete(wait);
    clearTimeout(p.timer);
  }

  private cancel(wait: string, p: Parked, reason: string, source: CancelSource): void {
    const expired = source === 'input_wait';
    this.drop(wait, p);
    if (this.shared) {
      // The one step a retry's adoption also takes: a call adopted elsewhere is not ours to cancel any more.
      void this.shared.unpark(wait).then(
        (won) => won && this.cancelJob(p, reason, source, expired),
        () => this.cancelJob(p, reason, source, expired), // Redis away: so is any adoption; the cancel decides in Redis or here
      );
      return;
    }
    this.cancelJob(p, reason, source, expired);
  }

  private cancelJob(p: Parked, reason: string, source: CancelSource, expired: boolean): void {
    const { session, id, state } = p.input.call;
    // A job that ended while parked (its deadline, a failure) has nothing to cancel: no late cancel to count.
    if (state !== 'queued' && state !== 'running') return;
    void this.backend.requestCancel(session, id, reason, source).then((result) => {
      if (expired && (result === 'cancelled-queued' || result === 'cancelled-running'))
        this.counters.inputWaitsExpired++;
    });
  }
}

/** Whether a parked call's job may still be resumed from here. */
function live(p: Parked): boolean {
  const state = p.input.call.state;
  return state === 'queued' || state === 'running';
}
