/**
 * The 2026 calls of one connection that may ask the client, served in
 * rounds (src/mrtr): at the door a retry is matched to its parked call and a
 * fresh call is reserved where its parked job outlives this exchange; in the
 * handler a round runs until the job ends or asks, and an ask parks it.
 */
import { ProtocolErrorCode as ErrorCode, type CallToolRequest, type ServerContext } from '@modelcontextprotocol/server';
import type { CallBackend, CallHandle, JobOutcome } from '../backend/backend.js';
import { InputCall } from '../asks/input-call.js';
import type { InputWaits, PendingClaim } from '../asks/input-waits.js';
import { admitRetry, capabilitiesOf } from '../asks/retry.js';
import type { LoggingLevel } from '../stages/log-levels.js';
import type { RequestId } from '../wire/registry.js';
import { startOptions } from './call-options.js';
import { NOT_A_CALL, type Admission, type CallTable } from './call-lifecycle.js';
import { MISSING_CLIENT_CAPABILITY, wireError } from './wire-errors.js';

/** How a round ended for the request that served it. */
export type RoundAnswer = JobOutcome | { readonly kind: 'input'; readonly answer: Record<string, unknown> };

export class CallRounds {
  /** 2026 retries admitted at the door, until their handler resumes the parked call (shared parking: once Redis decides). */
  private readonly resumes = new Map<
    RequestId,
    InputCall | { readonly claim: PendingClaim; readonly handle: CallHandle }
  >();

  constructor(
    /** The process's parked calls (one registry for every connection of the backend). */
    readonly waits: InputWaits,
    private readonly tools: CallBackend['tools'],
    private readonly requests: CallTable,
    /** Who sends this connection's requests (a `requestState` is bound to it). */
    private readonly caller: string,
    /** The lane of this connection's calls in the fair queue, when not the session's. */
    private readonly turn?: string,
  ) {}

  /**
   * A 2026 `tools/call` at the door: a retry is matched to its parked call, a
   * call of a tool that may ask the client is reserved under the input
   * waits. Undefined: an ordinary call, for the caller to reserve.
   */
  admit(id: RequestId, params: Record<string, unknown>): Admission | undefined {
    const retry = admitRetry(this.waits, params, this.caller);
    if (retry.kind === 'refuse')
      return { kind: 'refuse', code: ErrorCode.InvalidParams, message: retry.message, data: { reason: retry.reason } };
    if (retry.kind === 'resume') {
      this.requests.set(id, retry.input.call);
      this.resumes.set(id, retry.input);
      return { kind: 'forward' };
    }
    if (retry.kind === 'pending') {
      // Parked here or on another front end: the handle a cancel of this retry reaches either way.
      const handle = retry.claim.local?.call ?? this.waits.reserve();
      this.requests.set(id, handle);
      this.resumes.set(id, { claim: retry.claim, handle });
      return { kind: 'forward' };
    }
    if (this.tools.get(params.name as string)?.usesClient !== true) return undefined;
    this.requests.set(id, this.waits.reserve());
    return { kind: 'forward' };
  }

  /** Whether the call reserved for request `id` runs by rounds (a retry, or reserved under the input waits). */
  runsByRounds(id: RequestId, reserved: CallHandle, session: string): boolean {
    return this.resumes.has(id) || reserved.session !== session;
  }

  /**
   * One round (src/asks/input-call.ts): a retry hands the job its answers and
   * resumes it; the round ends with the job's outcome, or with
   * `input_required` once the job asks. Then this request's id no longer
   * leads to the call: the retry's id will.
   */
  async serve(
    id: RequestId,
    call: CallHandle,
    request: CallToolRequest,
    ctx: ServerContext,
    logLevel: () => LoggingLevel | undefined,
  ): Promise<RoundAnswer> {
    // Reports go to this request's stream, at the level it asks for (2026: per request).
    const exchange = {
      options: { ...startOptions(request, ctx, logLevel, true), ...(this.turn !== undefined && { turn: this.turn }) },
      capabilities: capabilitiesOf(ctx),
    };
    const resume = this.resumes.get(id);
    let input: InputCall | undefined;
    if (resume) {
      this.resumes.delete(id);
      if (resume instanceof InputCall) input = resume;
      else {
        const got = await this.waits.resume(
          resume.claim,
          request.params.name,
          resume.claim.local ? undefined : resume.handle,
          exchange,
        );
        if ('reason' in got) {
          // This request no longer leads to a call: one parked here reads cancelled once a retry elsewhere took it,
          // and the refusal must still leave.
          this.requests.set(id, NOT_A_CALL);
          throw wireError(ErrorCode.InvalidParams, got.message, { reason: got.reason });
        }
        input = got;
      }
      // The SDK lifts the retry's answers out of the params into the context (the door checked them in the params).
      const lifted = (ctx.mcpReq as { inputResponses?: Record<string, Record<string, unknown>> }).inputResponses;
      input.answer(
        lifted ?? (request.params as { inputResponses?: Record<string, Record<string, unknown>> }).inputResponses ?? {},
      );
    } else input = new InputCall(call, exchange);
    const round = await input.round(exchange);
    if (round.kind === 'outcome') {
      // SEP-2575: a request that lacks a capability the tool needs is refused with -32021, not answered with a tool
      // error. The job failed on the refused ask (the worker's CAS decided it), so this error is its one answer;
      // a stage that caught the refusal and completed anyway gets its result.
      const missing = input.missingCapability;
      if (missing !== undefined && round.outcome.kind === 'failed') {
        throw wireError(
          MISSING_CLIENT_CAPABILITY,
          `tool '${request.params.name}' asks the client for ${missing}: declare the '${missing}' capability in this request's clientCapabilities`,
          { requiredCapabilities: { [missing]: {} } },
        );
      }
      return round.outcome;
    }
    this.requests.set(id, NOT_A_CALL);
    const requestState = await this.waits.park(input, this.caller);
    return {
      kind: 'input',
      answer: { resultType: 'input_required', inputRequests: round.inputRequests, requestState },
    };
  }

  /** The first round's traceparent of the call retry `id` resumes (admitted at the door); undefined if `id` is no retry. */
  firstRoundOf(id: RequestId): string | undefined | Promise<string | undefined> {
    const resume = this.resumes.get(id);
    if (resume === undefined) return undefined;
    return this.waits.firstRoundOf(resume instanceof InputCall ? resume : resume.claim);
  }

  /** A retry answered before its handler resumed the call (the SDK refused it): true if `id` was one. */
  dropResume(id: RequestId): boolean {
    return this.resumes.delete(id);
  }
}
