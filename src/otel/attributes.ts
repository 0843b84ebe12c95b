/**
 * Span and metric names and attribute keys. The MCP ones follow the
 * OpenTelemetry semantic conventions for MCP as published in
 * open-telemetry/semantic-conventions v1.41.0, docs/gen-ai/mcp.md (status
 * Development; later releases moved the page to semantic-conventions-genai).
 * Trace context travels in `params._meta` as `traceparent`/`tracestate`/
 * `baggage` (SEP-414). What only this package can show (slot waits, worker
 * threads, stages, cancellation and hard stops) is under `mcp_cancel_pool.`.
 */

/** The pinned semantic-conventions release (see the module comment). */
export const SEMCONV_VERSION = '1.41.0';

/** Attribute keys: the conventions' (`mcp.`, `gen_ai.`, `jsonrpc.`, `network.`, `error.`, `rpc.`) and this package's own. */
export const ATTR = {
  mcpMethod: 'mcp.method.name',
  mcpProtocolVersion: 'mcp.protocol.version',
  mcpSessionId: 'mcp.session.id',
  mcpResourceUri: 'mcp.resource.uri',
  toolName: 'gen_ai.tool.name',
  operationName: 'gen_ai.operation.name',
  requestId: 'jsonrpc.request.id',
  networkTransport: 'network.transport',
  networkProtocol: 'network.protocol.name',
  errorType: 'error.type',
  rpcStatusCode: 'rpc.response.status_code',
  threadId: 'thread.id',
  /** Who asked for a cancel: one of CANCEL_SOURCES (src/state/cancel-source.ts), the list the metrics count by too. */
  cancelSource: 'mcp_cancel_pool.cancel.source',
  /** Who won the compare-exchange: `cancel` or `completion`. */
  cancelWinner: 'mcp_cancel_pool.cancel.winner',
  /** Where the call was when the cancel won: `queued` or `running`. */
  cancelFrom: 'mcp_cancel_pool.cancel.from',
  /** The worker thread ignored its checkpoints past the grace period and was terminated. */
  hardStop: 'mcp_cancel_pool.hard_stop',
  /** How the call ended: completed, failed, timedOut, cancelled, task, input_required. */
  outcome: 'mcp_cancel_pool.outcome',
  /** The process group a `child_kill` event of the run span signalled (its leader's pid). */
  childPid: 'process.pid',
  /** The signal a `child_kill` event sent: SIGTERM, or SIGKILL after the grace. */
  childSignal: 'mcp_cancel_pool.child.signal',
  stage: 'mcp_cancel_pool.stage',
  /** The longest time (ms) the call's stages went without a cancellation check, as its worker measured it. */
  checkpointGapMs: 'mcp_cancel_pool.checkpoint_gap_ms',
  /** The stage that gap ended in. */
  checkpointGapStage: 'mcp_cancel_pool.checkpoint_gap_stage',
  /** The tool's `cancelWithinMs`. */
  cancelWithinMs: 'mcp_cancel_pool.cancel_within_ms',
  taskId: 'mcp_cancel_pool.task.id',
  jobId: 'mcp_cancel_pool.job.id',
  hostId: 'mcp_cancel_pool.host.id',
} as const;

/** `mcp.server.operation.duration`'s bucket boundaries, as the conventions advise. */
export const DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];
