/**
 * `mcp-cancel-pool/plumbing`: the parts the server is built from, for
 * assembling one by hand (a custom transport, a test harness). Less stable
 * than the root entry: these follow the implementation.
 *
 * - {@link GuardedTransport}: the server's wire filter; wrap any SDK transport with it, then `createMcpServer(backend, wire, version, () => ({ guard, wraps: false, caller }))` and connect the server to the guard.
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

// Tasks (both eras): the store interface (a Redis-backed store for several hosts implements it), the in-memory
// default, and the runner that a backend's servers share: `new TaskRunner(backend, { store })`, passed to
// serveStdio / serveHttp / createMcpServer as their `tasks`.
export { TaskRunner, taskSession } from './tasks/runner.js';
// The parked 2026 calls of one backend (tools that asked the client): hand one to serveStdio / serveHttp / every guard.
export { InputWaits, type InputWaitsOptions, type InputWaitStats } from './asks/input-waits.js';
export type { TaskBackend, TaskCall, TaskRunnerOptions, TaskStats, WindowDecision, WindowedCall, WindowHooks } from './tasks/runner.js';
export { TaskNotFoundError, TaskTerminalError } from './tasks/errors.js';
export { MemoryTaskStore } from './tasks/memory-store.js';
export { InvalidCursorError, TaskLimitError } from './tasks/store.js';
export type { TaskAnswer, TaskLimits, TaskPage, TaskRecord, TaskStore, TerminalStatus } from './tasks/store.js';
export type { TaskSupport } from './tasks/task-support.js';
// With a store shared by front ends, their 2026 tasks' questions to the client are shared too (`sharedInputs`).
export type { SharedClaim, SharedQuestion, SharedTaskInputs } from './tasks/shared-task-inputs.js';
