/**
 * `mcp-cancel-pool serve` and `worker` start the OpenTelemetry Node SDK here,
 * and only when the standard variables ask for it:
 *
 * - traces: `OTEL_TRACES_EXPORTER=otlp` (or an `OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT`
 *   with the exporter unset), over `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL`
 *   `http/protobuf` (the default) or `http/json`, or `console` (JSON lines on
 *   stderr: stdout is the MCP channel); sampled per `OTEL_TRACES_SAMPLER`;
 * - metrics: `OTEL_METRICS_EXPORTER=otlp` or `console`, every `OTEL_METRIC_EXPORT_INTERVAL` ms;
 * - propagation: `OTEL_PROPAGATORS` (`tracecontext`, `baggage`, `none`);
 * - the resource: `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`; `OTEL_SDK_DISABLED=true` turns it all off.
 *
 * The SDK packages are optional peer dependencies, loaded by dynamic import
 * only then; one that is missing is named in one line and the server runs
 * without telemetry. The line is the Node 20 one: SDK 2.x with the 0.2xx
 * exporters (3.x and the 0.300+ exporters need Node >= 22.15).
 */
import { context, diag, DiagLogLevel, metrics, propagation, trace } from '@opentelemetry/api';
/** Where telemetry's own warnings go (the CLI passes its logger; src/log/ is not imported here). */
export interface TelemetryLog {
  warn(message: string): void;
}

/** What was started, and how to flush and stop it. */
export interface Telemetry {
  /** `otlp http/json`, `otlp http/protobuf` or `console (stderr)`, or undefined when traces are off. */
  readonly traces: string | undefined;
  /** As {@link Telemetry.traces}, for metrics. */
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

/** How one signal is exported: OTLP over one of its HTTP protocols, or JSON lines on stderr. */
export type SignalExport = 'http/json' | 'http/protobuf' | 'console';

/** What the variables ask for; undefined when they ask for nothing. */
export function telemetryWanted(env: Env = process.env): { traces?: SignalExport; metrics?: SignalExport } | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const endpoint = (signal: string) => env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`] ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const wanted = (signal: 'TRACES' | 'METRICS', exporter: string | undefined) => {
    const names = (exporter ?? (signal === 'TRACES' && endpoint(signal) !== undefined ? 'otlp' : 'none'))
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '' && s !== 'none');
    if (names.length === 0) return undefined;
    const other = names.find((n) => n !== 'otlp' && n !== 'console');
    if (other !== undefined)
      throw new TelemetryConfigError(
        `OTEL_${signal}_EXPORTER=${other} is not supported: use otlp, console (JSON lines on stderr) or none`,
      );
    if (names.length > 1)
      throw new TelemetryConfigError(`OTEL_${signal}_EXPORTER=${names.join(',')}: name one exporter (otlp or console)`);
    if (names[0] === 'console') return 'console';
    const protocol = env[`OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`] ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
    if (protocol !== 'http/protobuf' && protocol !== 'http/json')
      throw new TelemetryConfigError(
        `OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported: use http/protobuf or http/json`,
      );
    return protocol;
  };
  const traces = wanted('TRACES', env.OTEL_TRACES_EXPORTER);
  const metricsWanted = wanted('METRICS', env.OTEL_METRICS_EXPORTER);
  if (traces === undefined && metricsWanted === undefined) return undefined;
  return { ...(traces && { traces }), ...(metricsWanted && { metrics: metricsWanted }) };
}

/** The propagators this server can install (the W3C ones the core package has). */
export type PropagatorName = 'tracecontext' | 'baggage';

/** What `OTEL_PROPAGATORS` asks for: the names to install, in order, and one warning line for those skipped. */
export interface PropagatorsWanted {
  readonly use: readonly PropagatorName[];
  /** Names this server cannot install (b3, jaeger, xray, …), skipped. */
  readonly skipped: readonly string[];
  /** The one warning line that names them, when any was skipped. */
  readonly warning?: string;
}

/**
 * Reads `OTEL_PROPAGATORS` (default `tracecontext,baggage`): `none` installs
 * none (requests' `traceparent` is then ignored and nothing is injected into
 * requests to the client), an unsupported name is skipped and named in one
 * warning line. Propagation inside the server (a job's trace to its worker
 * host, a parked call's or task's first span) does not depend on it.
 */
export function propagatorsWanted(env: Env = process.env): PropagatorsWanted {
  const names = (env.OTEL_PROPAGATORS ?? 'tracecontext,baggage')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '');
  const list = names.length === 0 ? ['tracecontext', 'baggage'] : names;
  if (list.includes('none')) return { use: [], skipped: [] };
  const use: PropagatorName[] = [];
  const skipped: string[] = [];
  for (const name of list) {
    if (name === 'tracecontext' || name === 'baggage') {
      if (!use.includes(name)) use.push(name);
    } else if (!skipped.includes(name)) skipped.push(name);
  }
  if (skipped.length === 0) return { use, skipped };
  return {
    use,
    skipped,
    warning: `OTEL_PROPAGATORS: ${skipped.join(', ')} not supported (only tracecontext, baggage, none): skipped${use.length === 0 ? '; no propagator installed' : `; using ${use.join(',')}`}`,
  };
}

/** Loads an optional SDK package, or names it in one line. */
async function need<T>(name: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND')
      throw new TelemetryConfigError(
        `the OTEL_* variables ask for telemetry, but ${name} is not installed (npm install ${name}); serving without telemetry`,
      );
    throw error;
  }
}

/**
 * Starts what the variables ask for and registers it globally (tracer and
 * meter provider, the W3C propagators `OTEL_PROPAGATORS` names, an
 * AsyncLocalStorage context manager). Undefined when they ask for nothing, or
 * when it cannot start (`log` says why, in one line).
 */
export async function startTelemetry(
  serviceName: string,
  log: TelemetryLog,
  env: Env = process.env,
): Promise<Telemetry | undefined> {
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

async function start(
  want: NonNullable<ReturnType<typeof telemetryWanted>>,
  serviceName: string,
  log: TelemetryLog,
  env: Env,
): Promise<Telemetry> {
  const propagators = propagatorsWanted(env);
  if (propagators.warning !== undefined) log.warn(`telemetry: ${propagators.warning}`);
  const resources = await need('@opentelemetry/resources', () => import('@opentelemetry/resources'));
  const core = await need('@opentelemetry/core', () => import('@opentelemetry/core'));
  const hooks = await need('@opentelemetry/context-async-hooks', () => import('@opentelemetry/context-async-hooks'));
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over our default name.
  const resource = resources
    .resourceFromAttributes({ 'service.name': serviceName })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const stops: (() => Promise<void>)[] = [];
  if (want.traces) {
    const base = await need('@opentelemetry/sdk-trace-base', () => import('@opentelemetry/sdk-trace-base'));
    // Console: each span as it ends (as the Node SDK does for its console exporter), on stderr.
    const processor =
      want.traces === 'console'
        ? new base.SimpleSpanProcessor(
            (await import('./console-exporter.js')).stderrSpanExporter(core.ExportResultCode),
          )
        : new base.BatchSpanProcessor(
            want.traces === 'http/json'
              ? new (
                  await need(
                    '@opentelemetry/exporter-trace-otlp-http',
                    () => import('@opentelemetry/exporter-trace-otlp-http'),
                  )
                ).OTLPTraceExporter()
              : new (
                  await need(
                    '@opentelemetry/exporter-trace-otlp-proto',
                    () => import('@opentelemetry/exporter-trace-otlp-proto'),
                  )
                ).OTLPTraceExporter(),
          );
    // The sampler comes from OTEL_TRACES_SAMPLER(_ARG); the batch from OTEL_BSP_*.
    const provider = new base.BasicTracerProvider({ resource, spanProcessors: [processor] });
    trace.setGlobalTracerProvider(provider);
    stops.push(() => provider.shutdown());
  }
  if (want.metrics) {
    const sdk = await need('@opentelemetry/sdk-metrics', () => import('@opentelemetry/sdk-metrics'));
    const exporter =
      want.metrics === 'console'
        ? (await import('./console-exporter.js')).stderrMetricExporter(core.ExportResultCode)
        : want.metrics === 'http/json'
          ? new (
              await need(
                '@opentelemetry/exporter-metrics-otlp-http',
                () => import('@opentelemetry/exporter-metrics-otlp-http'),
              )
            ).OTLPMetricExporter()
          : new (
              await need(
                '@opentelemetry/exporter-metrics-otlp-proto',
                () => import('@opentelemetry/exporter-metrics-otlp-proto'),
              )
            ).OTLPMetricExporter();
    const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL ?? 60000);
    const provider = new sdk.MeterProvider({
      resource,
      readers: [
        new sdk.PeriodicExportingMetricReader({
          exporter,
          exportIntervalMillis: Number.isFinite(interval) && interval > 0 ? interval : 60000,
        }),
      ],
    });
    metrics.setGlobalMeterProvider(provider);
    stops.push(() => provider.shutdown());
  }
  context.setGlobalContextManager(new hooks.AsyncLocalStorageContextManager().enable());
  // None installed (OTEL_PROPAGATORS=none): the API's own no-op one stays.
  if (propagators.use.length > 0) {
    propagation.setGlobalPropagator(
      new core.CompositePropagator({
        propagators: propagators.use.map((name) =>
          name === 'tracecontext' ? new core.W3CTraceContextPropagator() : new core.W3CBaggagePropagator(),
        ),
      }),
    );
  }
  // The SDK's own complaints (an exporter that cannot reach its collector) reach the operator as log lines.
  diag.setLogger(
    {
      error: (m) => log.warn(`telemetry: ${m}`),
      warn: (m) => log.warn(`telemetry: ${m}`),
      info: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
    },
    DiagLogLevel.WARN,
  );
  return {
    traces: want.traces && (want.traces === 'console' ? 'console (stderr)' : `otlp ${want.traces}`),
    metrics: want.metrics && (want.metrics === 'console' ? 'console (stderr)' : `otlp ${want.metrics}`),
    shutdown: async () => {
      await Promise.race([Promise.allSettled(stops.map((s) => s())), new Promise((r) => setTimeout(r, 3000).unref())]);
    },
  };
}
