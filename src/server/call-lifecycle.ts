/**
 * The vocabulary a connection's tool-call lifecycle shares between its parts
 * (./tool-calls.ts, and the task window and MRTR rounds it delegates to):
 * the one interface to a connection's calls, the admission decision, the hooks.
 */
import type { CallToolRequest, CallToolResult, Server, ServerContext } from '@modelcontextprotocol/server';
import type { LoggingLevel } from '../stages/log-levels.js';
import type { TaskRunner } from '../tasks/runner.js';
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

/**
 * A connection's inbound requests, each a `ToolCall` (./tool-call.ts) from arrival until
 * its answer left: the one interface the guard, the server's handlers and the
 * transports use (implemented by ./tool-calls.ts). Only a request whose id is
 * absent here reaches the SDK, which keys its own bookkeeping by id alone.
 */
export interface ConnectionCalls {
  /** The backend's session key for this connection. */
  readonly session: string;
  /** Who sends this connection's requests (a 2026 `requestState` is bound to it). */
  readonly caller: string;
  /** The level the client set with `logging/setLevel` (2025: per session). */
  logLevel: LoggingLevel | undefined;
  /** The backend's parked 2026 calls (their counters are in `executor://stats`). */
  readonly inputWaits: InputWaits;
  /** The server that answers this connection's calls: its task runner, and its notifications for 2025 tasks. */
  serveWith(server: CallServer): void;
  /** A request arrived: what kind of call it is is decided here, once, and its job reserved before the SDK sees it. */
  admit(id: RequestId, method: string, params: unknown): Admission;
  /** A cancel for request `id` (a notification, a closed stream): delivered to its call, which reaches its job. */
  cancel(id: RequestId, reason: string | undefined, source: CancelSource): void;
  /** The SDK's `tools/call` handler: serves the admitted call by its kind. */
  handle(request: CallToolRequest, ctx: ServerContext): Promise<CallToolResult | Record<string, unknown>>;
  /** A response is leaving for request `id`: false if it must be dropped (its call was cancelled). */
  leaving(id: RequestId): boolean;
  /** Whether a progress or log notification of call `id` may go out now. */
  mayReport(id: RequestId, kind: 'progress' | 'log'): boolean;
  /** The transport closed: every call is cancelled; returns how many pooled calls were left unanswered. */
  closed(): number;
  /** Whether a request with this id has not been answered (or dropped) yet. */
  isInFlight(id: RequestId): boolean;
  /** Pooled calls not answered yet. */
  callsInFlight(): number;
  /** Resolves once no request of this connection waits for its answer. */
  whenIdle(): Promise<void>;
  /** For request `id`'s server span: the first round's traceparent of the 2026 call it retries, if it is one. */
  firstRoundOf(id: RequestId): string | undefined | Promise<string | undefined>;
}

/** What a connection's calls need of the server that answers them (./server.ts's `GuardedServer`). */
export interface CallServer {
  /** The task runner every server of the backend shares (a task's job, a windowed call's window). */
  readonly tasks: TaskRunner;
  /** The SDK server, for a 2025 task's notifications and requests to the client. */
  readonly sdk: Server;
}

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
  /** The task runner whose window admission reads (see GuardOptions.tasks). @default the connected server's */
  readonly tasks?: TaskRunner;
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
