/** The options and handler types of {@link CancelAwareClient}. */
import type {
  ClientOptions,
  CreateMessageRequest,
  CreateMessageResult,
  ElicitRequest,
  ElicitResult,
  ListRootsResult,
  Progress,
} from '@modelcontextprotocol/client';
import type { RequestId } from '../wire/registry.js';
import type { ClientCancelStats } from './guard.js';
import type { TaskClientCounters } from './task-handle.js';

/** Options for {@link CancelAwareClient}: the SDK client's, plus the guard's. */
export type CancelAwareClientOptions = ClientOptions & {
  /**
   * The SDK's era negotiation. `{ mode: 'legacy' }` speaks only 2025-11-25,
   * `{ mode: { pin: '2026-07-28' } }` only that revision.
   * @default `{ mode: 'auto' }`: `server/discover` first (answered within connect's timeout), 2026-07-28 where the server speaks it, 2025-11-25 otherwise
   */
  readonly versionNegotiation?: ClientOptions['versionNegotiation'];
  /**
   * How long a request whose cancellation we requested is remembered, to
   * absorb its late response. After that the entry is dropped. Default 30 s.
   */
  readonly cancelledTtlMs?: number;
};

/** Options for one call. */
export interface CallOptions {
  /** Aborting it cancels the call (if still pending) and rejects it at once with a {@link CallAbortedError}. */
  readonly signal?: AbortSignal;
  /** Milliseconds before the call is cancelled the same way, with `name === 'TimeoutError'`. Default 60 000; `Infinity` for none. */
  readonly timeout?: number;
  /** Receives `notifications/progress` for this call (a progress token is sent with the request). */
  readonly onprogress?: (progress: Progress) => void;
  /** Restart the timeout whenever progress arrives. Default false. */
  readonly resetTimeoutOnProgress?: boolean;
}

/** Options for {@link CancelAwareClient.connect}. */
export interface ConnectOptions {
  /** Aborting it before the handshake finished closes the connection; `initialize` itself is never cancelled. */
  readonly signal?: AbortSignal;
  /** Milliseconds for the handshake, then the same as an abort. Default 60 000; `Infinity` for none. */
  readonly timeout?: number;
}

/** What a handler of a server request gets besides the request's params. */
export interface ServerRequestContext {
  /** Fires when the server cancels this request (or the connection closes); stop working and return anything, it will not be sent. */
  readonly signal: AbortSignal;
  /** The server's id for the request (its own id space, unrelated to the ids of our requests). */
  readonly requestId: RequestId;
}

/** Answers `sampling/createMessage`. */
export type SamplingHandler = (
  params: CreateMessageRequest['params'],
  context: ServerRequestContext,
) => CreateMessageResult | Promise<CreateMessageResult>;
/** Answers `elicitation/create`. */
export type ElicitationHandler = (
  params: ElicitRequest['params'],
  context: ServerRequestContext,
) => ElicitResult | Promise<ElicitResult>;
/** Answers `roots/list`. */
export type RootsHandler = (context: ServerRequestContext) => ListRootsResult | Promise<ListRootsResult>;

/** Counters of {@link CancelAwareClient.stats}, plus two gauges of the outbound registry. */
export interface CancelAwareClientStats extends ClientCancelStats, TaskClientCounters {
  /** Our requests waiting for their response. */
  pending: number;
  /** Our cancelled requests still remembered (until their late response or their TTL). */
  cancelling: number;
}
