/**
 * `mcp-cancel-pool/ops`: what operators scrape and probe. The Prometheus
 * metrics registry ({@link Metrics}) and a backend instrumented for it, the
 * health and readiness handler with its own small server, and the sets the
 * CLI wires for a front end and a worker host.
 *
 * @module mcp-cancel-pool/ops
 */
export { Metrics, outcomeLabel } from '../ops/metrics.js';
export type { CancelSource, MetricsOptions, MetricsSources, Role, Snapshot } from '../ops/metrics.js';
export { instrumentBackend } from '../ops/instrument.js';
export type { InstrumentOptions } from '../ops/instrument.js';
export { subscribeJobMetrics } from '../ops/job-metrics.js';
export type { JobMetricsOptions } from '../ops/job-metrics.js';
export { healthHandler, serveHealth } from '../ops/health.js';
export type { HealthHandler, HealthOptions, HealthServer, Readiness } from '../ops/health.js';
export { frontEndOps, workerHostOps } from '../ops/ops.js';
export type { FrontEndOpsOptions, FrontEndSources, Ops, WorkerHostSources } from '../ops/ops.js';
