/**
 * `mcp-cancel-pool serve` and `worker` start the OpenTelemetry Node SDK here,
 * and only when the standard variables ask for it:
 *
 * - traces: `OTEL_TRACES_EXPORTER=otlp` (or an `OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT`
 *   with the exporter unset), over `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL`
 *   `http/protobuf` (the default) or `http/json`; sampled per `OTEL_TRACES_SAMPLER`;
 * - metrics: `OTEL_METRICS_EXPORTER=otlp`, every `OTEL_METRIC_EXPORT_INTERVAL` ms;
 * - the resource: `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`; `OTEL_SDK_DISABLED=true` turns it all off.
 *
 * The SDK packages are optional peer dependencies, loaded by dynamic import
 * only then; one that is missing is named in one line and the server runs
 * without telemetry. The line is the Node 20 one: SDK 2.x with the 0.2xx
 * exporters (3.x and the 0.300+ exporters need Node >= 22.15).
 */
import { context, diag, DiagLogLevel, metrics, propagation, trace } from '@opentelemetry/api';
import type { Logger } from '../log/logger.js';

/** What was started, and how to flush and stop it. */
export interface Telemetry {
  /** `otlp http/json` or `otlp http/protobuf`, or undefined when traces are off. */
  readonly traces: string | undefined;
  readonly metrics: string | undefined;
  /** Exports what is buffered and stops (bounded: a collector that is away does not hold the exit). */
  shutdown(): Promise<void>;
}

/** The start-up line: what is exported, and how (`telemetry: traces otlp http/json, metrics otlp http/protobuf`). */
export function describeTelemetry(telemetry: Telemetry): string {
  return `telemetry: ${[telemetry.traces && `traces ${telemetry.traces}`, telemetry.metrics && `metrics ${telemetry.metrics}`].filter(Boolean).join(', ')}`;
}

/** Telemetry could not start as the variables ask: one line says why. */
export class TelemetryConfigError extends Error {}

type Env = Readonly<Record<string, string | undefined>>;

/** What the variables ask for; undefined when they ask for nothing. */
export function telemetryWanted(env: Env = process.env): { traces?: 'http/json' | 'http/protobuf'; metrics?: 'http/json' | 'http/protobuf' } | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const endpoint = (signal: string) => env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`] ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const wanted = (signal: 'TRACES' | 'METRICS', exporter: string | undefined) => {
    const names = (exporter ?? (signal === 'TRACES' && endpoint(signal) !== undefined ? 'otlp' : 'none')).split(',').map((s) => s.trim()).filter((s) => s !== '' && s !== 'none');
    if (names.length === 0) return undefined;
    const other = names.find((n) => n !== 'otlp');
    if (other !== undefined) throw new TelemetryConfigError(`OTEL_${signal}_EXPORTER=${other} is not supported (stdout carries the MCP channel over stdio): use otlp or none`);
    const protocol = env[`OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`] ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
    if (protocol !== 'http/protobuf' && protocol !== 'http/json') throw new TelemetryConfigError(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported: use http/protobuf or http/json`);
    return protocol;
  };
  const traces = wanted('TRACES', env.OTEL_TRACES_EXPORTER);
  const metricsWanted = wanted('METRICS', env.OTEL_METRICS_EXPORTER);
  if (traces === undefined && metricsWanted === undefined) return undefined;
  return { ...(traces && { traces }), ...(metricsWanted && { metrics: metricsWanted }) };
}

/** Loads an optional SDK package, or names it in one line. */
async function need<T>(name: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') throw new TelemetryConfigError(`the OTEL_* variables ask for telemetry, but ${name} is not installed (npm install ${name}); serving without telemetry`);
    throw error;
  }
}

/**
 * Starts what the variables ask for and registers it globally (tracer and
 * meter provider, W3C trace-context and baggage propagators, an
 * AsyncLocalStorage context manager). Undefined when they ask for nothing, or
 * when it cannot start (`log` says why, in one line).
 */
export async function startTelemetry(serviceName: string, log: Logger, env: Env = process.env): Promise<Telemetry | undefined> {
  let want;
  try {
    want = telemetryWanted(env);
    if (!want) return undefined;
    return await start(want, serviceName, log, env);
  } catch (error) {
    if (!(error instanceof TelemetryConfigError)) throw error;
    log.warn(`telemetry: ${error.message}`);
    return undefined;
  }
}

async function start(want: NonNullable<ReturnType<typeof telemetryWanted>>, serviceName: string, log: Logger, env: Env): Promise<Telemetry> {
  const resources = await need('@opentelemetry/resources', () => import('@opentelemetry/resources'));
  const core = await need('@opentelemetry/core', () => import('@opentelemetry/core'));
  const hooks = await need('@opentelemetry/context-async-hooks', () => import('@opentelemetry/context-async-hooks'));
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over our default name.
  const resource = resources.resourceFromAttributes({ 'service.name': serviceName }).merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const stops: (() => Promise<void>)[] = [];
  if (want.traces) {
    const base = await need('@opentelemetry/sdk-trace-base', () => import('@opentelemetry/sdk-trace-base'));
    const exporter =
      want.traces === 'http/json'
        ? new (await need('@opentelemetry/exporter-trace-otlp-http', () => import('@opentelemetry/exporter-trace-otlp-http'))).OTLPTraceExporter()
        : new (await need('@opentelemetry/exporter-trace-otlp-proto', () => import('@opentelemetry/exporter-trace-otlp-proto'))).OTLPTraceExporter();
    // The sampler comes from OTEL_TRACES_SAMPLER(_ARG); the batch from OTEL_BSP_*.
    const provider = new base.BasicTracerProvider({ resource, spanProcessors: [new base.BatchSpanProcessor(exporter)] });
    trace.setGlobalTracerProvider(provider);
    stops.push(() => provider.shutdown());
  }
  if (want.metrics) {
    const sdk = await need('@opentelemetry/sdk-metrics', () => import('@opentelemetry/sdk-metrics'));
    const exporter =
      want.metrics === 'http/json'
        ? new (await need('@opentelemetry/exporter-metrics-otlp-http', () => import('@opentelemetry/exporter-metrics-otlp-http'))).OTLPMetricExporter()
        : new (await need('@opentelemetry/exporter-metrics-otlp-proto', () => import('@opentelemetry/exporter-metrics-otlp-proto'))).OTLPMetricExporter();
    const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL ?? 60000);
    const provider = new sdk.MeterProvider({ resource, readers: [new sdk.PeriodicExportingMetricReader({ exporter, exportIntervalMillis: Number.isFinite(interval) && interval > 0 ? interval : 60000 })] });
    metrics.setGlobalMeterProvider(provider);
    stops.push(() => provider.shutdown());
  }
  context.setGlobalContextManager(new hooks.AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new core.CompositePropagator({ propagators: [new core.W3CTraceContextPropagator(), new core.W3CBaggagePropagator()] }));
  // The SDK's own complaints (an exporter that cannot reach its collector) reach the operator as log lines.
  diag.setLogger({ error: (m) => log.warn(`telemetry: ${m}`), warn: (m) => log.warn(`telemetry: ${m}`), info: () => undefined, debug: () => undefined, verbose: () => undefined }, DiagLogLevel.WARN);
  return {
    traces: want.traces && `otlp ${want.traces}`,
    metrics: want.metrics && `otlp ${want.metrics}`,
    shutdown: async () => {
      await Promise.race([Promise.allSettled(stops.map((s) => s())), new Promise((r) => setTimeout(r, 3000).unref())]);
    },
  };
}
