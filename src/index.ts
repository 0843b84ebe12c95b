/**
 * mcp-cancel-pool: host CPU-heavy MCP tools on a worker-thread pool, with
 * cancellation that stops the work and never answers a cancelled request.
 *
 * This root entry is the embedders' (the pool inside the MCP server you
 * already have): {@link createToolPool}, which registers pooled tools on an
 * SDK 2.x `McpServer` of yours; the executor (the local pool backend), its options,
 * outcomes and stats, the backend contract, and the errors. The other
 * audiences have one entry each (docs/entry-points.md): tool authors
 * `mcp-cancel-pool/tools`, server hosts `mcp-cancel-pool/server`, tasks
 * `mcp-cancel-pool/tasks`, operators `mcp-cancel-pool/ops`, client users
 * `mcp-cancel-pool/client`, many hosts on one Redis `mcp-cancel-pool/remote`.
 * It loads no transport: serving is the server entry's.
 *
 * @module mcp-cancel-pool
 */
// Registers the jobs' spans with the executor (src/executor/job-tracing.ts), which imports nothing of otel/.
import './otel/job-trace.js';
export { Executor } from './executor/executor.js';
export type { ExecutorStats } from './executor/executor.js';
export type { Job } from './executor/job.js';
export { BUILTIN_TOOLS } from './executor/options.js';
export type { ExecutorOptions } from './executor/options.js';
export type { ToolPriority, AppliedToolPriority } from './pool/protocol.js';
export type {
  CallBackend,
  CallHandle,
  BackendStats,
  ToolGapStats,
  StartOptions,
  JobOutcome,
  FailureCode,
  CancelResult,
  CallState,
  ProgressReport,
  LogEntry,
  ClientRequestHandler,
} from './backend/backend.js';
export type { RequestId } from './wire/registry.js';
export type { JobStateName } from './state/job-state.js';
export { CANCEL_SOURCES } from './state/cancel-source.js';
export type { CancelSource } from './state/cancel-source.js';
export { createToolPool, ToolPool } from './embed/pool.js';
export type { ToolPoolOptions, RegisterOptions } from './embed/pool.js';
export {
  McpCancelPoolError,
  DuplicateRequestError,
  ExecutorClosedError,
  InvalidOptionError,
  ToolModuleError,
} from './errors.js';
export type { ErrorCodeName } from './errors.js';
export { MissingPeerError } from './peers.js';
