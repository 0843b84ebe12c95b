/**
 * mcp-cancel-pool: host CPU-heavy MCP tools on a worker-thread pool, with
 * cancellation that stops the work and never answers a cancelled request.
 *
 * This root entry is what a user needs: the executor (the local pool
 * backend), its options, outcomes and stats, serving it over stdio or HTTP,
 * pooled tools on an SDK 2.x `McpServer` of your own ({@link createToolPool}),
 * and the errors. Writing tools: `mcp-cancel-pool/tools`. A client that
 * cancels correctly: `mcp-cancel-pool/client`. The parts the server is
 * built from (guard, registry, ledgers, line transport, state codes), for
 * assembling a server by hand: `mcp-cancel-pool/plumbing`. Many hosts on
 * one Redis (the queue backend, worker hosts): `mcp-cancel-pool/remote`.
 */
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
export { defineTool, stage, StopError } from './stages/tool.js';
export type { ToolDefinition, StageContext, StageFn, NamedStage, StageLike, ClientRequestMethod, ToolModule, LoggingLevel } from './stages/tool.js';
export { serveStdio } from './transport/stdio/serve.js';
export type { StdioOptions, StdioServer } from './transport/stdio/serve.js';
export { serveHttp } from './transport/http/serve.js';
export type { HttpOptions, HttpMcpServer } from './transport/http/serve.js';
export { AUTH_TOKEN_ENV } from './transport/http/access.js';
export { Authorization, callerOf } from './transport/http/authorization.js';
export type { HttpAnswer, Authorized } from './transport/http/authorization.js';
export { authorizationConfig } from './transport/http/authorization-config.js';
export type { AuthorizationConfig, AuthorizationFlags, ClientCredentials } from './transport/http/authorization-config.js';
export { createMcpServer, STATS_URI } from './server/server.js';
export { createToolPool, ToolPool } from './embed/pool.js';
export type { ToolPoolOptions, RegisterOptions } from './embed/pool.js';
export type { Metrics } from './ops/metrics.js';
export type { HealthHandler } from './ops/health.js';
export type { ServerStats, ServerScope } from './server/server.js';
export type { WireStats } from './server/guard.js';
export { McpCancelPoolError, DuplicateRequestError, ExecutorClosedError, InvalidOptionError, ToolModuleError } from './errors.js';
export { HttpConfigError } from './transport/http/access.js';
export type { ErrorCodeName } from './errors.js';
