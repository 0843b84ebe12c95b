/**
 * The client half: a cancel-aware MCP client for any MCP server, and the
 * transport guard it is built on. Imports nothing of the server, so a client
 * application can load it alone.
 *
 * It stands on the SDK's client (`@modelcontextprotocol/client`), an optional
 * peer dependency: importing this entry without it stops with one line naming
 * the `npm install` to run (src/peers.ts), so the values below are loaded
 * after that check.
 *
 * @module mcp-cancel-pool/client
 */
import { withPeers } from '../peers.js';

const client = await withPeers('mcp-cancel-pool/client', ['@modelcontextprotocol/client'], () => import('./entry.js'));

/** An MCP client whose every call can be cancelled with an AbortSignal or a timeout, and never hears a cancelled call's answer (docs/client.md). */
export const CancelAwareClient: typeof client.CancelAwareClient = client.CancelAwareClient;
/** An MCP client whose every call can be cancelled with an AbortSignal or a timeout, and never hears a cancelled call's answer (docs/client.md). */
export type CancelAwareClient = import('./client.js').CancelAwareClient;
/** The client transport's guard: drops a cancelled request's late answer and tracks the server's requests. */
export const ClientGuard: typeof client.ClientGuard = client.ClientGuard;
/** The client transport's guard: drops a cancelled request's late answer and tracks the server's requests. */
export type ClientGuard = import('./guard.js').ClientGuard;
/** Default for {@link ClientGuardOptions.cancelledTtlMs}. */
export const DEFAULT_CANCELLED_TTL_MS: typeof client.DEFAULT_CANCELLED_TTL_MS = client.DEFAULT_CANCELLED_TTL_MS;

export { CallAbortedError } from '../errors.js';
export { InboundRequest } from '../wire/inbound-ledger.js';
export { OutboundRequest } from '../wire/outbound-ledger.js';
export type { OutboundState } from '../wire/outbound-ledger.js';
export type {
  CancelAwareClientOptions,
  CancelAwareClientStats,
  CallOptions,
  ConnectOptions,
  ServerRequestContext,
  SamplingHandler,
  ElicitationHandler,
  RootsHandler,
} from './options.js';
export type { TaskHandle, TaskCallOptions, TaskClientCounters } from './task-handle.js';
export type { ClientGuardOptions, ClientCancelStats, InboundState } from './guard.js';
export type { RequestId } from '../wire/registry.js';
