/**
 * The 2026 calls of one connection that may ask the client, served in
 * rounds (src/asks): at the door a retry is matched to its parked call and a
 * fresh call is reserved where its parked job outlives this exchange; in the
 * handler a round runs until the job ends or asks, and an ask parks it. What
 * a round needs between the two is kept on the call itself (./tool-call.ts).
 */
import { ProtocolErrorCode as ErrorCode, type CallToolRequest, type ServerContext } from '@modelcontextprotocol/server';
import type { CallBackend, CallHandle, JobOutcome } from '../backend/backend.js';
import { InputCall } from '../asks/input-call.js';
import type { InputWaits, PendingClaim } from '../asks/input-waits.js';
import { admitRetry, capabilitiesOf } from '../asks/retry.js';
import type { LoggingLevel } from '../stages/log-levels.js';
import { startOptions } from './call-options.js';
import type { Admission } from './call-lifecycle.js';
import type { ToolCall } from './tool-call.js';
import { MISSING_CLIENT_CAPABILITY, wireError } from './wire-errors.js';

/** How a round ended for the request that served it. */
export type RoundAnswer = JobOutcome | { readonly kind: 'input'; readonly answer: Record<string, unknown> };

/** A 2026 retry's parked call, matched at the door: here, or (shared parking) once Redis decides in the handler. */
export type Resume = InputCall | { readonly claim: PendingClaim; readonly handle: CallHandle };

/** How a 2026 call is admitted by rounds: its reservation (and a retry's parked call), or a refusal at the door. */
export type RoundsAdmission =
  | { readonly kind: 'rounds'; readonly job: CallHandle; readonly resume?: Resume }
  | { readonly kind: 'fresh' }
  | Extract<Admission, { kind: 'refuse' }>;

export class CallRounds {
  constructor(
    /** The process's parked calls (one registry for every connection of the backend). */
    readonly waits: InputWaits,
    private readonly tools: CallBackend['tools'],
    /** Who sends this connection's requests (a `requestState` is bound to it). */
    private readonly caller: string,
    /** The lane of this connection's calls in the fair queue, when not the session's. */
    private readonly turn?: string,
  ) {}

  /**
   * A 2026 retry at the door, matched to its parked call (the claim is taken
   * here). `fresh`: no retry, for the caller to decide on.
   */
  admitRetry(params: Record<string, unknown>): RoundsAdmission {
    const retry = admitRetry(this.waits, params, this.caller);
    if (retry.kind === 'refuse')
      return { kind: 'refuse', code: ErrorCode.InvalidParams, message: retry.message, data: { reason: retry.reason } };
    if (retry.kind === 'resume') return { kind: 'rounds', job: retry.input.call, resume: retry.input };
    if (retry.kind === 'pending') {
      // Parked here or on another front end: the handle a cancel of this retry reaches either way.
      const handle = retry.claim.local?.call ?? this.waits.reserve();
      return { kind: 'rounds', job: handle, resume: { claim: retry.claim, handle } };
    }
    return { kind: 'fresh' };
  }

  /** Whether a fresh 2026 call of this tool runs by rounds (its tool may ask the client). */
  byRounds(tool: string): boolean {
    return this.tools.get(tool)?.usesClient === true;
  }

  /** A fresh call by rounds: reserved under the input waits, where its parked job outlives this exchange. */
  reserve(): CallHandle {
    return this.waits.reserve();
  }

  /**
   * One round (src/asks/input-call.ts): a retry hands the job its answers and
   * resumes it; the round ends with the job's outcome, or with
   * `input_required` once the job asks. Then this request's id no longer
   * leads to the call: the retry's id will.
   */
  async serve(
    entry: ToolCall,
    call: CallHandle,
    resume: Resume | undefined,
    request: CallToolRequest,
    ctx: ServerContext,
    logLevel: () => LoggingLevel | undefined,
  ): Promise<RoundAnswer> {
    // Reports go to this request's stream, at the level it asks for (2026: per request).
    const exchange = {
      options: { ...startOptions(request, ctx, logLevel, true), ...(this.turn !== undefined && { turn: this.turn }) },
      capabilities: capabilitiesOf(ctx),
    };
    let input: InputCall | undefined;
    if (resume) {
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
          entry.detach();
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
    entry.detach();
    const requestState = await this.waits.park(input, this.caller);
    return {
      kind: 'input',
      answer: { resultType: 'input_required', inputRequests: round.inputRequests, requestState },
    };
  }

  /** The first round's traceparent of the call a retry resumes (admitted at the door). */
  firstRoundOf(resume: Resume): string | undefined | Promise<string | undefined> {
    return this.waits.firstRoundOf(resume instanceof InputCall ? resume : resume.claim);
  }
}
