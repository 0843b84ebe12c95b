/**
 * mcp-cancel-pool: host CPU-heavy MCP tools on a worker-thread pool, with
 * cancellation that stops the work and never answers a cancelled request.
 *
 * The pieces, in the order a tool call meets them: transport (stdio, HTTP)
 * and its response guard → in-flight registry → admission queue → worker
 * pool → stages → the state word that decides completion vs cancellation.
 */
export { Executor, Job, DuplicateRequestError, BUILTIN_TOOLS } from './executor.js';
export type {
  ExecutorOptions,
  StartOptions,
  JobOutcome,
  ExecutorStats,
  CancelResult,
  ProgressReport,
  LogEntry,
  ClientRequestHandler,
} from './executor.js';
export type { CallBackend, CallHandle, BackendStats, FailureCode } from './backend/backend.js';
export { McpCancelPoolError, ExecutorClosedError, InvalidOptionError, ToolModuleError } from './errors.js';
export type { ErrorCodeName } from './errors.js';
export { defineTool, stage, StopError } from './stages/tool.js';
export type { ToolDefinition, StageContext, StageFn, NamedStage, StageLike, ClientRequestMethod, ToolModule, LoggingLevel } from './stages/tool.js';
export { InFlightRegistry } from './registry/registry.js';
export type { InFlightEntry, RequestId, Direction } from './registry/registry.js';
export { JobState } from './state/job-state.js';
export type { JobStateName } from './state/job-state.js';
export { GuardedTransport, newWireStats } from './transport/guard.js';
export { OutboundLedger, OutboundRequest } from './registry/outbound.js';
export type { OutboundState, OutboundCounters, OutboundLedgerOptions } from './registry/outbound.js';
export type { WireStats, GuardOptions } from './transport/guard.js';
export { LineTransport } from './transport/stdio.js';
export type { LineTransportOptions } from './transport/stdio.js';
export { serveStdio } from './transport/serve.js';
export type { StdioOptions, StdioServer } from './transport/serve.js';
export { serveHttp } from './transport/http.js';
export type { HttpOptions, HttpMcpServer } from './transport/http.js';
export { AUTH_TOKEN_ENV, HttpConfigError } from './transport/http-access.js';
export { createMcpServer, serverStats, STATS_URI, SERVER_BUSY } from './server/server.js';
export type { ServerStats } from './server/server.js';
export * from './client/index.js';
export { z } from 'zod';
