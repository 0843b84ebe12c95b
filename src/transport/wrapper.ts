/**
 * The plumbing shared by the server's and the client's guards: a Transport
 * that owns an inner transport and sees every message in both directions.
 * Subclasses decide what to do with each message; this class only wires the
 * callbacks. It imports nothing of the server, so the client can use it.
 */
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type {
  JSONRPCErrorResponse,
  JSONRPCMessage,
  JSONRPCNotification,
  JSONRPCRequest,
  JSONRPCResultResponse,
  MessageExtraInfo,
  RequestId,
} from '@modelcontextprotocol/sdk/types.js';

export abstract class TransportWrapper implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  constructor(protected readonly inner: Transport) {}

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  async start(): Promise<void> {
    this.inner.onmessage = (message, extra) => this.receive(message, extra);
    this.inner.onerror = (error) => this.onerror?.(error);
    this.inner.onclose = () => {
      this.innerClosed();
      this.onclose?.();
    };
    await this.inner.start();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** A message from the peer; forward it with `this.onmessage` if it should reach the protocol layer. */
  protected abstract receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void;

  /** The inner transport closed; runs before `onclose` is passed on. */
  protected abstract innerClosed(): void;

  /** A message to the peer. */
  abstract send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void>;
}

/** A `notifications/cancelled` for `requestId` (a notification: no top-level id). */
export function cancelledNotification(requestId: RequestId, reason: string | undefined): JSONRPCMessage {
  return { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, ...(reason !== undefined && { reason }) } };
}

/** The `requestId` of a cancellation, or undefined if it is missing or malformed (null, an object, …). */
export function cancelledRequestId(message: JSONRPCMessage): RequestId | undefined {
  const id = (message as { params?: { requestId?: unknown } }).params?.requestId;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

// Telling messages apart by shape. The SDK's isJSONRPC* helpers run a full
// schema parse, and every miss builds an error object: four misses per call
// were a measurable share of the per-call cost. Inbound messages were already
// validated by the transport, and outbound ones were built by the SDK.

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
