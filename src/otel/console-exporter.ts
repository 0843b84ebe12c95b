/**
 * `OTEL_TRACES_EXPORTER=console` and `OTEL_METRICS_EXPORTER=console` for
 * `serve` and `worker`: one JSON line per span (the shape of the SDK's
 * ConsoleSpanExporter) or per metric (ConsoleMetricExporter's), written to
 * stderr. Never stdout: over stdio it carries the MCP channel, and the SDK's
 * own console exporters write there. Loaded, like the rest of the SDK, only
 * when a variable asks for it (src/otel/sdk.ts); the SDK types are erased.
 */
import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { PushMetricExporter, ResourceMetrics } from '@opentelemetry/sdk-metrics';

/** Where the lines go: stderr, one write per line. */
export type LineSink = (line: string) => void;

const toStderr: LineSink = (line) => void process.stderr.write(line);

/** What the SDK's `ExportResultCode.SUCCESS` and `FAILED` are (passed in: this module loads no SDK code itself). */
export interface ExportCodes {
  readonly SUCCESS: ExportResult['code'];
  readonly FAILED: ExportResult['code'];
}

const micros = (t: readonly [number, number]) => t[0] * 1e6 + Math.round(t[1] / 1e3);

/** One span as the SDK's ConsoleSpanExporter shows it, as one JSON object. */
export function spanLine(span: ReadableSpan): string {
  const ids = span.spanContext();
  return `${JSON.stringify({
    resource: { attributes: span.resource.attributes },
    instrumentationScope: span.instrumentationScope,
    traceId: ids.traceId,
    parentSpanContext: span.parentSpanContext,
    traceState: ids.traceState?.serialize(),
    name: span.name,
    id: ids.spanId,
    kind: span.kind,
    timestamp: micros(span.startTime),
    duration: micros(span.duration),
    attributes: span.attributes,
    status: span.status,
    events: span.events,
    links: span.links,
  })}\n`;
}

/** A span exporter writing {@link spanLine}s to stderr (or `sink`). */
export function stderrSpanExporter(codes: ExportCodes, sink: LineSink = toStderr): SpanExporter {
  let stopped = false;
  return {
    export(spans, done) {
      if (stopped) return done({ code: codes.FAILED });
      for (const span of spans) sink(spanLine(span));
      done({ code: codes.SUCCESS });
    },
    shutdown: async () => {
      stopped = true;
    },
    forceFlush: async () => undefined,
  };
}

/** A metric exporter writing one JSON line per metric (descriptor, data point type, data points) to stderr (or `sink`). */
export function stderrMetricExporter(codes: ExportCodes, sink: LineSink = toStderr): PushMetricExporter {
  let stopped = false;
  return {
    export(metrics: ResourceMetrics, done) {
      if (stopped) return done({ code: codes.FAILED });
      for (const scope of metrics.scopeMetrics) {
        for (const metric of scope.metrics)
          sink(
            `${JSON.stringify({ descriptor: metric.descriptor, dataPointType: metric.dataPointType, dataPoints: metric.dataPoints })}\n`,
          );
      }
      done({ code: codes.SUCCESS });
    },
    shutdown: async () => {
      stopped = true;
    },
    forceFlush: async () => undefined,
  };
}
