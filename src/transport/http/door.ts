/**
 * What a Streamable HTTP POST body is refused for before the SDK's transport
 * sees it. The transport answers a message that fails its schema with
 * `id: null`, even when the message has a perfectly good id, and it keys its
 * response streams by request id alone: a second request with an id still in
 * flight would take over the first one's stream, and the first response
 * would have nowhere to go.
 *
 * A POST is refused whole (HTTP 400, nothing in it runs), as the transport
 * already does for a bad batch: the body is one JSON-RPC error for a single
 * message, or for a batch an array with one error per message that caused
 * the refusal. The client's SDK reads neither as an answer to a pending
 * request (it fails the POST), so a refusal that carries the id of a call
 * in flight cannot be taken for that call's response.
 */
import { ProtocolErrorCode as ErrorCode } from '@modelcontextprotocol/server';
// The 2.x line's zod message schemas live in its core package (the server re-exports only the Standard Schema ones).
import { JSONRPCMessageSchema, JSONRPCRequestSchema } from '@modelcontextprotocol/core';
import { DuplicateRequestError } from '../../errors.js';
import { describeIssues } from '../../issues.js';
import type { RequestId } from '../../wire/registry.js';
import { requestIdOf } from '../envelope.js';
import { errorResponse, type ErrorResponseBody } from '../../server/wire-errors.js';

/** A JSON-RPC error response; `id` is null when it cannot be read from the message. */
export type ErrorResponse = ErrorResponseBody;

/** A refused POST's JSON body. */
export type Refusal = ErrorResponse | ErrorResponse[];

/** Errors for the messages of `body` that fail the JSON-RPC schema, each with its id when one can be read. */
export function malformedMessages(body: unknown): Refusal | undefined {
  if (body === undefined) return undefined; // no JSON body was parsed (e.g. another Content-Type): the transport answers
  const messages = Array.isArray(body) ? body : [body];
  const errors: ErrorResponse[] = [];
  for (const raw of messages) {
    if (JSONRPCMessageSchema.safeParse(raw).success) continue;
    const id = requestIdOf(raw);
    // A request-shaped message: the request schema alone says what is wrong (the union's error only says "invalid").
    const why =
      id === undefined ? '' : `: ${describeIssues(JSONRPCRequestSchema.safeParse(raw).error ?? { issues: [] })}`;
    errors.push(rpcError(id ?? null, ErrorCode.InvalidRequest, `invalid JSON-RPC message${why}`));
  }
  return refusal(body, errors);
}

/**
 * Errors for the requests of `body` whose id is still in flight in the
 * session, or repeated within the batch. Run after {@link malformedMessages}.
 */
export function duplicateRequests(
  body: unknown,
  session: string,
  inFlight: (id: RequestId) => boolean,
): Refusal | undefined {
  const messages = Array.isArray(body) ? body : [body];
  const errors: ErrorResponse[] = [];
  const seen = new Set<RequestId>();
  for (const raw of messages) {
    const id = requestIdOf(raw);
    if (id === undefined) continue;
    if (inFlight(id) || seen.has(id))
      errors.push(rpcError(id, ErrorCode.InvalidRequest, new DuplicateRequestError(session, id).message));
    seen.add(id);
  }
  return refusal(body, errors);
}

function refusal(body: unknown, errors: ErrorResponse[]): Refusal | undefined {
  if (errors.length === 0) return undefined;
  return Array.isArray(body) ? errors : errors[0];
}

const rpcError = errorResponse;
