/**
 * The values of `mcp-cancel-pool/client`, loaded by src/client/index.ts once its optional peer
 * (@modelcontextprotocol/client) is known to be installed.
 *
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
} from './options.js';
export type { TaskHandle, TaskCallOptions, TaskClientCounters } from './task-handle.js';
export { ClientGuard, InboundRequest, DEFAULT_CANCELLED_TTL_MS } from './guard.js';
export { OutboundRequest } from '../wire/outbound-ledger.js';
export type { OutboundState } from '../wire/outbound-ledger.js';
export type { ClientGuardOptions, ClientCancelStats, InboundState } from './guard.js';
export type { RequestId } from '../wire/registry.js';
