/** What the OTEL_* variables ask `serve` and `worker` for (src/otel/sdk.ts): the standard names, and one line for what is not supported. */
import { describe, expect, it } from 'vitest';
import { propagatorsWanted, TelemetryConfigError, telemetryWanted } from '../../dist/src/otel/sdk.js';

describe('telemetryWanted', () => {
  it('asks for nothing without the variables, or with OTEL_SDK_DISABLED=true', () => {
    expect(telemetryWanted({})).toBeUndefined();
    expect(telemetryWanted({ OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none' })).toBeUndefined();
    expect(telemetryWanted({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
  });

  it('traces over http/protobuf by default; http/json when asked; an endpoint alone turns traces on, never metrics', () => {
    expect(telemetryWanted({ OTEL_TRACES_EXPORTER: 'otlp' })).toEqual({ traces: 'http/protobuf' });
    expect(telemetryWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toEqual({
      traces: 'http/protobuf',
    });
    expect(telemetryWanted({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toEqual({
      traces: 'http/json',
    });
    expect(
      telemetryWanted({
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      }),
    ).toEqual({ traces: 'http/protobuf' });
    expect(telemetryWanted({ OTEL_METRICS_EXPORTER: 'otlp', OTEL_TRACES_EXPORTER: 'none' })).toEqual({
      metrics: 'http/protobuf',
    });
  });

  it('console for either signal: JSON lines on stderr (stdout is the MCP channel), whatever the OTLP protocol says', () => {
    expect(telemetryWanted({ OTEL_TRACES_EXPORTER: 'console' })).toEqual({ traces: 'console' });
    expect(telemetryWanted({ OTEL_METRICS_EXPORTER: 'console', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toEqual({
      metrics: 'console',
    });
    expect(telemetryWanted({ OTEL_TRACES_EXPORTER: 'console', OTEL_METRICS_EXPORTER: 'otlp' })).toEqual({
      traces: 'console',
      metrics: 'http/protobuf',
    });
  });

  it('refuses in one line what it cannot do: another exporter, two at once, grpc', () => {
    expect(() => telemetryWanted({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(TelemetryConfigError);
    expect(() => telemetryWanted({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(
      /OTEL_TRACES_EXPORTER=zipkin is not supported: use otlp, console \(JSON lines on stderr\) or none/,
    );
    expect(() => telemetryWanted({ OTEL_TRACES_EXPORTER: 'otlp,console' })).toThrow(/name one exporter/);
    expect(() => telemetryWanted({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(
      /OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: use http\/protobuf or http\/json/,
    );
  });
});

describe('propagatorsWanted (OTEL_PROPAGATORS)', () => {
  it('tracecontext and baggage by default; the list as given; none installs none', () => {
    expect(propagatorsWanted({})).toEqual({ use: ['tracecontext', 'baggage'], skipped: [] });
    expect(propagatorsWanted({ OTEL_PROPAGATORS: '' })).toEqual({ use: ['tracecontext', 'baggage'], skipped: [] });
    expect(propagatorsWanted({ OTEL_PROPAGATORS: 'baggage' })).toEqual({ use: ['baggage'], skipped: [] });
    expect(propagatorsWanted({ OTEL_PROPAGATORS: ' TraceContext , tracecontext' })).toEqual({
      use: ['tracecontext'],
      skipped: [],
    });
    expect(propagatorsWanted({ OTEL_PROPAGATORS: 'none' })).toEqual({ use: [], skipped: [] });
    expect(propagatorsWanted({ OTEL_PROPAGATORS: 'tracecontext,none' })).toEqual({ use: [], skipped: [] });
  });

  it('an unsupported name is skipped and named, with the others, in one warning line', () => {
    const wanted = propagatorsWanted({ OTEL_PROPAGATORS: 'b3,tracecontext,jaeger,xray,baggage' });
    expect(wanted.use).toEqual(['tracecontext', 'baggage']);
    expect(wanted.skipped).toEqual(['b3', 'jaeger', 'xray']);
    expect(wanted.warning).toBe(
      'OTEL_PROPAGATORS: b3, jaeger, xray not supported (only tracecontext, baggage, none): skipped; using tracecontext,baggage',
    );
    expect(wanted.warning).not.toContain('\n');
    expect(propagatorsWanted({ OTEL_PROPAGATORS: 'b3multi' })).toEqual({
      use: [],
      skipped: ['b3multi'],
      warning:
        'OTEL_PROPAGATORS: b3multi not supported (only tracecontext, baggage, none): skipped; no propagator installed',
    });
    expect(propagatorsWanted({ OTEL_PROPAGATORS: 'tracecontext' }).warning).toBeUndefined();
  });
});
