/**
 * The response guard: a Transport wrapper that sits where messages enter and
 * leave the process. Inbound, it registers every `tools/call` before the SDK
 * dispatches it and decides `notifications/cancelled` through the executor's
 * state machine; outbound, it drops any response for a request whose
 * cancellation won, whatever code path produced it.
 */
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type MessageExtraInfo,
} from '@modelcontextprotocol/sdk/types.js';
import { DuplicateRequestError, type Executor, type Job } from '../executor.js';
import type { RequestId } from '../registry/registry.js';

/** Counted at the wire, shared by every connection of a server. */
export interface WireStats {
  /** Responses produced for a cancelled request and stopped here. */
  responsesDropped: number;
  /** Progress notifications stopped because their request had ended. */
  progressDropped: number;
}

export class GuardedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  /** Tool calls of this connection from arrival until their response left (or was dropped). */
  private readonly jobs = new Map<RequestId, Job>();
  /**
   * Runs once the handler of a cancelled call has settled. Streamable HTTP
   * uses it to end that POST's response stream, which would otherwise wait
   * forever for a response that must never come.
   */
  afterCancelled?: (id: RequestId) => void;

  constructor(
    private readonly inner: Transport,
    /** The registry's session key for this connection. */
    readonly session: string,
    private readonly executor: Executor,
    private readonly wire: WireStats,
  ) {}

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
      this.executor.cancelSession(this.session, 'transport closed');
      this.onclose?.();
    };
    await this.inner.start();
  }

  /** The job reserved for an inbound tool call, for the request handler. */
  jobFor(id: RequestId): Job | undefined {
    return this.jobs.get(id);
  }

  /** Called when the tool-call handler has settled; the SDK has sent (or suppressed) its response by the next macrotask. */
  settled(id: RequestId): void {
    const job = this.jobs.get(id);
    if (!job) return;
    setImmediate(() => {
      if (this.jobs.get(id) !== job) return;
      this.jobs.delete(id);
      if (job.state === 'cancelled') this.afterCancelled?.(id);
    });
  }

  /**
   * Cancels one of this connection's inbound requests (a notification, a
   * dropped HTTP stream). If cancellation wins, the SDK is told too so its
   * handler context stops sending; if it loses, the SDK never hears of it and
   * the normal response goes out.
   */
  cancel(id: RequestId, reason?: string): boolean {
    const r = this.executor.cancel(this.session, id, reason);
    if (r !== 'cancelled-queued' && r !== 'cancelled-running') return false;
    this.onmessage?.({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, ...(reason !== undefined && { reason }) } });
    return true;
  }

  private receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') {
      // Never answered, never forwarded as is: only a winning cancellation reaches the SDK.
      const params = message.params as { requestId?: unknown; reason?: unknown } | undefined;
      const id = params?.requestId;
      if (typeof id === 'string' || typeof id === 'number') this.cancel(id, typeof params?.reason === 'string' ? params.reason : undefined);
      return;
    }
    if (isJSONRPCRequest(message) && message.method === 'tools/call') {
      try {
        this.jobs.set(message.id, this.executor.reserve(this.session, message.id));
      } catch (error) {
        const duplicate = error instanceof DuplicateRequestError;
        void this.inner.send({
          jsonrpc: '2.0',
          id: message.id,
          error: { code: duplicate ? ErrorCode.InvalidRequest : ErrorCode.InternalError, message: error instanceof Error ? error.message : String(error) },
        });
        return;
      }
    }
    this.onmessage?.(message, extra);
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
      const id = message.id as RequestId;
      const job = this.jobs.get(id);
      if (job) {
        this.jobs.delete(id);
        if (job.state === 'cancelled') {
          this.wire.responsesDropped++;
          return;
        }
        job.abandon(); // a response before the job started (e.g. the SDK rejected the params): release its reservation
      }
    } else if (isJSONRPCNotification(message) && message.method === 'notifications/progress' && options?.relatedRequestId !== undefined) {
      const job = this.jobs.get(options.relatedRequestId);
      if (job && job.state !== 'running') {
        this.wire.progressDropped++;
        return;
      }
    }
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
