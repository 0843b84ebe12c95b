/**
 * An OTLP/HTTP receiver for the tests: a node:http server on 127.0.0.1 that
 * takes `http/json` exports (POST /v1/traces, /v1/metrics), parses them and
 * keeps the spans (as {@link SeenSpan}) and the metric names it was sent.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SeenSpan } from './otel-helpers.js';

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes?: OtlpAttribute[];
  events?: { name: string; attributes?: OtlpAttribute[] }[];
}

function valueOf(v: OtlpValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  return v.boolValue;
}

function attributesOf(list: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));
}

export interface Receiver {
  /** The base URL to give as OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly url: string;
  readonly spans: SeenSpan[];
  /** Names of the metrics received, with the service that sent each. */
  readonly metrics: {
    readonly service: string | undefined;
    readonly name: string;
    readonly attributes: Record<string, unknown>[];
  }[];
  /** Bodies that were not OTLP JSON (there should be none). */
  readonly rejected: string[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const spans: SeenSpan[] = [];
  const metrics: Receiver['metrics'] = [];
  const rejected: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        if (!String(req.headers['content-type']).includes('application/json'))
          throw new Error(`content-type ${req.headers['content-type']}`);
        const body = JSON.parse(text) as {
          resourceSpans?: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
          resourceMetrics?: {
            resource?: { attributes?: OtlpAttribute[] };
            scopeMetrics?: {
              metrics?: { name: string; histogram?: { dataPoints?: { attributes?: OtlpAttribute[] }[] } }[];
            }[];
          }[];
        };
        if (req.url === '/v1/traces') {
          for (const rs of body.resourceSpans ?? []) {
            const service = attributesOf(rs.resource?.attributes)['service.name'] as string | undefined;
            for (const ss of rs.scopeSpans ?? []) {
              for (const s of ss.spans ?? []) {
                spans.push({
                  name: s.name,
                  traceId: s.traceId,
                  spanId: s.spanId,
                  parentSpanId: s.parentSpanId || undefined,
                  kind: s.kind - 1, // OTLP's SpanKind is the API's plus one (0 is UNSPECIFIED)
                  attributes: attributesOf(s.attributes),
                  events: (s.events ?? []).map((e) => ({ name: e.name, attributes: attributesOf(e.attributes) })),
                  start: Number(BigInt(s.startTimeUnixNano) / 1000n) / 1000,
                  end: Number(BigInt(s.endTimeUnixNano) / 1000n) / 1000,
                  ...(service !== undefined && { service }),
                });
              }
            }
          }
        } else if (req.url === '/v1/metrics') {
          for (const rm of body.resourceMetrics ?? []) {
            const service = attributesOf(rm.resource?.attributes)['service.name'] as string | undefined;
            for (const sm of rm.scopeMetrics ?? [])
              for (const m of sm.metrics ?? [])
                metrics.push({
                  service,
                  name: m.name,
                  attributes: (m.histogram?.dataPoints ?? []).map((d) => attributesOf(d.attributes)),
                });
          }
        } else throw new Error(`path ${req.url}`);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch (error) {
        rejected.push(`${req.url}: ${String(error)}: ${text.slice(0, 200)}`);
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    metrics,
    rejected,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The variables that make `serve` or `worker` export to `receiver` over OTLP http/json, soon after each span ends. */
export function otlpEnv(receiver: Receiver, service: string): Record<string, string> {
  return {
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_SERVICE_NAME: service,
    OTEL_BSP_SCHEDULE_DELAY: '50',
  };
}
