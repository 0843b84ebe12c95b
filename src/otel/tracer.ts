/**
 * The library's one door to OpenTelemetry: `@opentelemetry/api` only, and only
 * when an application (or `mcp-cancel-pool serve`/`worker`, src/otel/sdk.ts)
 * has registered an SDK. With none, {@link liveTracer} and {@link liveMeter}
 * return undefined after one global look-up and allocate nothing, so every
 * call path can ask them first and skip its telemetry entirely (the API's own
 * no-op tracer would still build a NonRecordingSpan per `startSpan`).
 */
import { createNoopMeter, metrics, trace, type Meter, type Tracer, type TracerProvider } from '@opentelemetry/api';

/** The instrumentation scope of every span and metric this package makes. */
export const SCOPE = 'mcp-cancel-pool';

/** The no-op meter the API hands out while no MeterProvider is registered (a singleton). */
const NOOP_METER = createNoopMeter();

let cached: { readonly provider: TracerProvider; readonly tracer: Tracer } | undefined;

/**
 * The registered SDK's tracer, or undefined while none is registered. The
 * global provider is the API's ProxyTracerProvider, whose `getDelegateTracer`
 * is undefined until an SDK sets its delegate; the tracer is then kept for
 * that provider (`trace.disable()` makes a new one, so a swapped SDK is seen).
 */
export function liveTracer(): Tracer | undefined {
  const provider = trace.getTracerProvider();
  if (cached?.provider === provider) return cached.tracer;
  const proxy = provider as TracerProvider & { getDelegateTracer?: (name: string) => Tracer | undefined };
  const tracer =
    typeof proxy.getDelegateTracer === 'function' ? proxy.getDelegateTracer(SCOPE) : provider.getTracer(SCOPE);
  if (tracer === undefined) return undefined;
  cached = { provider, tracer };
  return tracer;
}

/** The registered SDK's meter, or undefined while no MeterProvider is registered (the API's no-op meter is a singleton). */
export function liveMeter(): Meter | undefined {
  const meter = metrics.getMeter(SCOPE);
  return meter === NOOP_METER ? undefined : meter;
}
