/**
 * Reading what we can from a message that failed the JSON-RPC schema, so an
 * error can name the request it answers. JSON-RPC 2.0: the id of an Invalid
 * Request is null only "if there was an error in detecting the id".
 */
import type { ZodType } from 'zod/v4';
import {
  JSONRPCErrorResponseSchema,
  JSONRPCNotificationSchema,
  JSONRPCRequestSchema,
  JSONRPCResultResponseSchema,
} from '@modelcontextprotocol/core';

/**
 * The id of a parsed JSON value shaped like a request: an object with a string
 * `method` and an `id` that is a string or a finite number. Anything else
 * (a notification, a response, a batch, a scalar, `id: null` or `id: {}`)
 * gives `undefined`, and must then be answered, if at all, with `id: null`.
 * Only the top level is read, so any depth of nesting below it is safe.
 *
 * @param raw - the value `JSON.parse` returned for one message
 * @returns the id to answer with, or `undefined` when none can be determined
 */
export function requestIdOf(raw: unknown): string | number | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const { id, method } = raw as { id?: unknown; method?: unknown };
  if (typeof method !== 'string') return undefined;
  if (typeof id === 'string') return id;
  if (typeof id === 'number' && Number.isFinite(id)) return id;
  return undefined;
}

/**
 * How deeply arrays and objects nest in a JSON text, without building it: a
 * message too deep for a recursive reader (`JSON.stringify`, structured
 * clone, a schema) can be refused before anything recurses into it.
 * Brackets inside strings do not count. Stops counting once `limit` is passed.
 *
 * @param text - a JSON text (valid or not; for invalid text the answer is an estimate)
 * @param limit - the depth at which to stop scanning
 * @returns the deepest nesting found, or `limit + 1` if it went past `limit`
 */
export function nestingDepth(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (c === 93 || c === 125) depth--;
  }
  return deepest;
}

/**
 * Whether a parsed JSON value is shaped like a notification (an object with a
 * string `method` and no `id` member): JSON-RPC never answers one, even when
 * it is invalid.
 */
export function isNotificationShaped(raw: unknown): boolean {
  return (
    typeof raw === 'object' &&
    raw !== null &&
    !Array.isArray(raw) &&
    typeof (raw as { method?: unknown }).method === 'string' &&
    !('id' in raw)
  );
}

interface Issue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
  readonly errors?: readonly (readonly Issue[])[];
}

/**
 * Why a parsed JSON value is not a JSON-RPC message, in one readable line
 * (e.g. `params._meta.progressToken: expected string, received object, or
 * expected number, received object`), checked against the kind of message it
 * looks like rather than against the union of all of them.
 */
export function describeInvalid(raw: unknown): string {
  if (Array.isArray(raw)) return 'a batch (JSON array); send each message on its own line';
  if (typeof raw !== 'object' || raw === null) return `expected an object, got ${raw === null ? 'null' : typeof raw}`;
  const schema: ZodType =
    'method' in raw
      ? 'id' in raw
        ? JSONRPCRequestSchema
        : JSONRPCNotificationSchema
      : 'error' in raw
        ? JSONRPCErrorResponseSchema
        : JSONRPCResultResponseSchema;
  const result = schema.safeParse(raw);
  if (result.success) return 'not a request, notification or response';
  return (result.error.issues as readonly Issue[]).slice(0, 3).map(describeIssue).join('; ');
}

function describeIssue(issue: Issue): string {
  const where = issue.path.length ? `${issue.path.map(String).join('.')}: ` : '';
  const alternatives = issue.errors?.map((branch) => branch[0]?.message).filter((m): m is string => m !== undefined);
  const what = alternatives?.length ? alternatives.join(', or ') : issue.message;
  return where + what.replace(/Invalid input: /g, '');
}
