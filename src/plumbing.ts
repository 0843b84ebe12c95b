/**
 * `mcp-cancel-pool/plumbing`: the parts the server is built from, for
 * assembling one by hand (a custom transport, a test harness). Less stable
 * than the root entry: these follow the implementation.
 *
 * - {@link GuardedTransport}: the server's wire filter; wrap any SDK transport with it, then `createMcpServer`.
 * - {@link newWireStats}, {@link serverStats}, {@link SERVER_BUSY}: the wire counters and the busy error code.
 * - {@link InFlightRegistry}, {@link OutboundLedger}: the in-flight bookkeeping both guards use.
 * - {@link LineTransport}: newline-delimited JSON-RPC over any pair of streams.
 * - {@link JobState}: the numeric codes of the shared state word.
 */
export { GuardedTransport, newWireStats } from './server/guard.js';
export type { GuardOptions, WireStats } from './server/guard.js';
export { serverStats, SERVER_BUSY } from './server/server.js';
export { InFlightRegistry } from './wire/registry.js';
export type { InFlightEntry, RequestId, Direction } from './wire/registry.js';
export { OutboundLedger, OutboundRequest } from './wire/outbound-ledger.js';
export type { OutboundState, OutboundCounters, OutboundLedgerOptions } from './wire/outbound-ledger.js';
export { LineTransport } from './transport/stdio/line-transport.js';
export type { LineTransportOptions } from './transport/stdio/line-transport.js';
export { JobState } from './state/job-state.js';
export type { JobStateName, JobStateCode } from './state/job-state.js';
