/**
 * A 2026 `tools/call` at the door: a retry (it carries `requestState`) is
 * matched to its parked call before the SDK sees it, so a cancel of the retry
 * that arrives at once already finds the call; a refused one is answered
 * there with -32602 and `data.reason`, and resumes nothing.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  specTypeSchemas,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { ClientRequestMethod } from '../stages/tool.js';
import type { InputCall } from './input-call.js';
import type { InputWaits, PendingClaim, RetryRefusal } from './input-waits.js';

/** The result type each kind of question must be answered with. */
const RESULT: Record<ClientRequestMethod, 'ElicitResult' | 'CreateMessageResult' | 'ListRootsResult'> = {
  'elicitation/create': 'ElicitResult',
  'sampling/createMessage': 'CreateMessageResult',
  'roots/list': 'ListRootsResult',
};

/** Whether request params carry the 2026 envelope. */
export function isModernParams(params: unknown): boolean {
  return (
    typeof (params as { _meta?: Record<string, unknown> } | undefined)?._meta?.[PROTOCOL_VERSION_META_KEY] === 'string'
  );
}

/** The request's declared client capabilities (2026: per request). */
export function capabilitiesOf(ctx: ServerContext): Readonly<Record<string, unknown>> {
  const raw = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = raw?.[CLIENT_CAPABILITIES_META_KEY];
  return typeof capabilities === 'object' && capabilities !== null ? (capabilities as Record<string, unknown>) : {};
}

/** What the door does with a 2026 call: not a retry, a retry that resumes `input`, or a refusal. */
export type RetryAdmission =
  | { readonly kind: 'fresh' }
  | { readonly kind: 'resume'; readonly input: InputCall }
  /** Shared parking: Redis decides in the handler whether this retry resumes the call (InputWaits.resume). */
  | { readonly kind: 'pending'; readonly claim: PendingClaim }
  | ({ readonly kind: 'refuse' } & RetryRefusal);

/** Matches a 2026 call to its parked call when it is a retry. */
export function admitRetry(waits: InputWaits, params: Record<string, unknown>, caller: string): RetryAdmission {
  const { requestState, inputResponses, name } = params as {
    requestState?: unknown;
    inputResponses?: unknown;
    name: string;
  };
  if (requestState === undefined) return { kind: 'fresh' };
  if (typeof requestState !== 'string')
    return { kind: 'refuse', ...waits.refuse('forged', 'requestState must be the string the server sent') };
  const claimed = waits.claim(requestState, caller, name, (input) => responsesProblem(input.pending(), inputResponses));
  if ('reason' in claimed) return { kind: 'refuse', ...claimed };
  return 'wait' in claimed ? { kind: 'pending', claim: claimed } : { kind: 'resume', input: claimed };
}

/**
 * Why `responses` cannot answer the questions `pending` names, key → method
 * (mrtr.mdx: validate it; ignore keys not asked for). Also the check of a
 * 2026 `tasks/update`.
 */
export function responsesProblem(
  pending: ReadonlyMap<string, ClientRequestMethod>,
  responses: unknown,
): string | undefined {
  if (responses === undefined) return undefined; // nothing answered: asked again
  if (typeof responses !== 'object' || responses === null || Array.isArray(responses))
    return 'inputResponses must be an object keyed by the inputRequests keys';
  for (const [key, method] of pending) {
    const response = (responses as Record<string, unknown>)[key];
    if (response === undefined) continue;
    const checked = specTypeSchemas[RESULT[method]]['~standard'].validate(response);
    if ('then' in checked) continue; // the SDK's schemas are synchronous; never taken
    if (checked.issues)
      return `inputResponses['${key}'] is not a ${RESULT[method]}: ${checked.issues.map((i) => i.message).join('; ')}`;
  }
  return undefined;
}
