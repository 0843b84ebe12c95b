/**
 * The client half: a cancel-aware MCP client for any MCP server, and the
 * transport guard it is built on. Imports nothing of the server, so a client
 * application can load it alone.
 */
export { CancelAwareClient, CallAbortedError } from './client.js';
export type {
  CancelAwareClientOptions,
  CancelAwareClientStats,
  CallOptions,
  ConnectOptions,
  ServerRequestContext,
  SamplingHandler,
  ElicitationHandler,
  RootsHandler,
} from './client.js';
export { ClientGuard, OutboundRequest, InboundRequest, DEFAULT_CANCELLED_TTL_MS } from './guard.js';
export type { ClientGuardOptions, ClientCancelStats, OutboundState, InboundState } from './guard.js';
export type { RequestId } from '../registry/registry.js';
