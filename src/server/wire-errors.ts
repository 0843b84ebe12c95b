/**
 * The JSON-RPC errors the server puts on the wire, built in one place. The
 * implementation-defined `-32000` means "refused at a limit" (a full queue, a
 * task limit); the named codes are the spec's.
 */
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';

/** JSON-RPC code for a request refused at a limit: a full admission queue, the task limit (implementation-defined server error range). */
export const SERVER_BUSY = -32000;
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
