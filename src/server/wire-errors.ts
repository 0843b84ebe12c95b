/**
 * The JSON-RPC errors the server puts on the wire, built in one place. The
 * implementation-defined `-32000` means "refused" (a full queue, a task or
 * session limit, missing credentials); the named codes are the spec's.
 */
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { RequestId } from '../wire/registry.js';

/** JSON-RPC code for a request refused: at a limit (a full admission queue, the task or session limit) or for want of credentials (implementation-defined server error range). */
export const SERVER_BUSY = -32000;

/** A JSON-RPC error response, for the places that answer without the SDK (HTTP refusals before a server sees the request). */
export interface ErrorResponseBody {
  readonly jsonrpc: '2.0';
  readonly id: RequestId | null;
  readonly error: { readonly code: number; readonly message: string };
}

/** Builds an {@link ErrorResponseBody}; `id` null when the request's id is not known (or there is none). */
export function errorResponse(id: RequestId | null, code: number, message: string): ErrorResponseBody {
  return { jsonrpc: '2.0', id, error: { code, message } };
}
/** The 2026-07-28 code for a request that needs a client capability the request did not declare (a `required` task tool without the tasks extension). */
export const MISSING_CLIENT_CAPABILITY = ProtocolErrorCode.MissingRequiredClientCapability;

/** A JSON-RPC error for the wire. */
export function wireError(code: number, message: string, data?: unknown): ProtocolError {
  return new ProtocolError(code, message, data);
}

/** -32602: the request names something that is not there, or its params are wrong. */
export function invalidParams(message: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, message);
}

/** -32000: refused at a limit. */
export function serverBusy(message: string): ProtocolError {
  return new ProtocolError(SERVER_BUSY, message);
}

export { ProtocolError, ProtocolErrorCode };
