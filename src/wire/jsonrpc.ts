/**
 * JSON-RPC by shape, for both ends' guards: telling messages apart, and the
 * cancellation notification's fields. The SDK's isJSONRPC* helpers run a
 * full schema parse, and every miss builds an error object: four misses per
 * call were a measurable share of the per-call cost. Inbound messages were
 * already validated by the transport, and outbound ones were built by the SDK.
 */
import {
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type JSONRPCResultResponse,
  type RequestId,
} from '@modelcontextprotocol/server';

/** A `notifications/cancelled` for `requestId` (a notification: no top-level id). */
export function cancelledNotification(requestId: RequestId, reason: string | undefined): JSONRPCMessage {
  return {
    jsonrpc: '2.0',
    method: 'notifications/cancelled',
    params: { requestId, ...(reason !== undefined && { reason }) },
  };
}

/** The `requestId` of a cancellation, or undefined if it is missing or malformed (null, an object, …). */
export function cancelledRequestId(message: JSONRPCMessage): RequestId | undefined {
  const id = (message as { params?: { requestId?: unknown } }).params?.requestId;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** A request: has a method and an id. */
export function isRequest(message: JSONRPCMessage): message is JSONRPCRequest {
  return 'method' in message && 'id' in message;
}

/** A notification: has a method and no id. */
export function isNotification(message: JSONRPCMessage): message is JSONRPCNotification {
  return 'method' in message && !('id' in message);
}

/** A response, result or error. */
export function isResponse(message: JSONRPCMessage): message is JSONRPCResultResponse | JSONRPCErrorResponse {
  return !('method' in message) && ('result' in message || 'error' in message);
}

/** The `reason` of a cancellation, if it is a string. */
export function cancelReason(message: JSONRPCMessage): string | undefined {
  const reason = (message as { params?: { reason?: unknown } }).params?.reason;
  return typeof reason === 'string' ? reason : undefined;
}

/** -32001, the code SDK 1.x named `RequestTimeout` (2.x reports a timeout as an SdkError, with no wire code of its own). */
const REQUEST_TIMEOUT = -32001;

/**
 * The error a local protocol layer (the SDK) gets for a request we cancelled
 * on its behalf, so its wait for `id` settles; the peer's real answer, if
 * any, is absorbed by the ledger.
 */
export function cancelledLocally(id: RequestId, reason: string | undefined): JSONRPCErrorResponse {
  return {
    jsonrpc: '2.0',
    id,
    error: { code: REQUEST_TIMEOUT, message: `request cancelled: ${reason ?? 'no reason given'}` },
  };
}
