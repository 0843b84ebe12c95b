/**
 * The base of both ends' guards (the server's and the client's): a Transport
 * that owns an inner transport and sees every message in both directions.
 * Subclasses decide what to do with each message; this class only wires the
 * callbacks. It imports nothing of the server, so the client can use it.
 */
import type { JSONRPCMessage, MessageExtraInfo, Transport, TransportSendOptions } from '@modelcontextprotocol/server';

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
