/**
 * The vocabulary a connection's tool-call lifecycle shares between its parts
 * (./tool-calls.ts, and the task window and MRTR rounds it delegates to):
 * the table of in-flight requests, the admission decision, the hooks.
 */
import type { CallHandle } from '../backend/backend.js';
import type { RequestId } from '../wire/registry.js';
import type { InputWaits } from '../asks/input-waits.js';
import type { CancelSource } from '../state/cancel-source.js';

/** What the transport needs to hear about a call's end. */
export interface ToolCallHooks {
  /** The handler of a cancelled call has settled: nothing will ever be sent for it (Streamable HTTP ends its stream). */
  readonly cancelled?: (id: RequestId) => void;
}

/** The wire counters the lifecycle moves. */
export interface LifecycleCounters {
  responsesDropped: number;
  progressDropped: number;
  lateLogsDropped: number;
}

/** The decision for an arriving request. */
export type Admission =
  | { readonly kind: 'forward' }
  /** Another request of this connection has that id in flight: refuse without touching the first. */
  | { readonly kind: 'duplicate'; readonly message: string }
  | { readonly kind: 'refuse'; readonly code: number; readonly message: string; readonly data?: unknown };

/** Marks an inbound request other than a tool call (or a call whose request no longer leads to its job). */
export const NOT_A_CALL = null;

/**
 * Every inbound request of one connection, from arrival until its response
 * left (or was dropped): a tool call's handle, or {@link NOT_A_CALL}. Only a
 * request whose id is absent here reaches the SDK, which keys its own
 * bookkeeping (abort controllers, HTTP streams) by id alone.
 */
export type CallTable = Map<RequestId, CallHandle | typeof NOT_A_CALL>;

/** Where a connection's parked 2026 calls are kept, and who sends its requests. */
export interface ToolCallOptions {
  readonly hooks?: ToolCallHooks;
  /**
   * Who sends this connection's requests (a 2026 `requestState` is bound to it).
   * @default the session
   */
  readonly caller?: string;
  /** The lane of this connection's calls in the fair queue ({@link StartOptions.turn}). @default the session */
  readonly turn?: string;
  /** The backend's parked 2026 calls, shared by every connection of that backend (src/asks/input-waits.ts). */
  readonly inputWaits: InputWaits;
  /**
   * Whether the SDK aborting `ctx.mcpReq.signal` may mean the client left (a closed 2026 HTTP stream); not over stdio,
   * where the guard decides every peer cancel and `ToolCalls.closed` a closed connection. @default true
   */
  readonly abortMeansCancel?: boolean;
  /**
   * The cancel reason for calls a closed connection leaves: a 2026 HTTP exchange closing unanswered is the client
   * closing its response stream ('client disconnected'); a stdio or 2025 session closing is the session ending.
   * @default 'transport closed'
   */
  readonly closeReason?: string;
  /** Who those cancels count as (the metrics and traces): a closed stream or a session closing. @default 'session_close' */
  readonly closeSource?: CancelSource;
}
