/** What the OTEL_* variables ask `serve` and `worker` for (src/otel/sdk.ts): the standard names, and one line for what is not supported. */
import { describe, expect, it } from 'vitest';
import { TelemetryConfigError, telemetryWanted } from '../dist/src/otel/sdk.js';

describe('telemetryWanted', () => {
  it('asks for nothing without the variables, or with OTEL_SDK_DISABLED=true', () => {
    expect(telemetryWanted({})).toBeUndefined();
    expect(telemetryWanted({ OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none' })).toBeUndefined();
    expect(telemetryWanted({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
  });

  it('traces over http/protobuf by default; http/json when asked; an endpoint alone turns traces on, never metrics', () => {
    expect(telemetryWanted({ OTEL_TRACES_EXPORTER: 'otlp' })).toEqual({ traces: 'http/protobuf' });
    expect(telemetryWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toEqual({ traces: 'http/protobuf' });
    expect(telemetryWanted({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toEqual({ traces: 'http/json' });
    expect(telemetryWanted({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })).toEqual({ traces: 'http/protobuf' });
    expect(telemetryWanted({ OTEL_METRICS_EXPORTER: 'otlp', OTEL_TRACES_EXPORTER: 'none' })).toEqual({ metrics: 'http/protobuf' });
  });

  it('refuses in one line what it cannot do: console (stdout is the MCP channel), grpc', () => {
    expect(() => telemetryWanted({ OTEL_TRACES_EXPORTER: 'console' })).toThrow(TelemetryConfigError);
    expect(() => telemetryWanted({ OTEL_TRACES_EXPORTER: 'console' })).toThrow(/OTEL_TRACES_EXPORTER=console is not supported/);
    expect(() => telemetryWanted({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: use http\/protobuf or http\/json/);
  });
});
