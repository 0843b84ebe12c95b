/**
 * `mcp-cancel-pool serve` (stdio and HTTP) and `worker` as real processes,
 * exporting OTLP over HTTP with http/json to a receiver in the test that
 * parses the JSON: a plain call, a cancelled call, a hard stop, a task and a
 * call across hosts (a real redis-server), each checked as a span tree; the
 * metrics when OTEL_METRICS_EXPORTER asks; and the JSON log lines of a call
 * carrying its trace id.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CLI,
  startHttpServer,
  stdioClient,
  stopChild,
  until,
  type HttpServerProcess,
  type WiredClient,
} from './helpers.js';
import { childrenOf, one, render, type SeenSpan } from './otel-helpers.js';
import { otlpEnv, startReceiver, type Receiver } from './otlp-receiver.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import { startHost, type HostProcess } from './remote-helpers.js';
import { LineServer } from './line-client.js';
import { modernHeaders, modernRequest } from './modern-helpers.js';
import { messagesIn } from './http-helpers.js';

const KEYS = [
  'gen_ai.tool.name',
  'mcp_cancel_pool.cancel.source',
  'mcp_cancel_pool.cancel.winner',
  'mcp_cancel_pool.hard_stop',
  'mcp_cancel_pool.outcome',
  'thread.id',
];
const traceparent = (traceId: string) => `00-${traceId}-00f067aa0ba902b7-01`;
const newTraceId = () =>
  [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');

let receiver: Receiver;
const cleanup: (() => Promise<void>)[] = [];
beforeAll(async () => {
  receiver = await startReceiver();
});
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
  expect(receiver.rejected).toEqual([]);
});
afterAll(async () => {
  await receiver.close();
});

/** The spans of one trace, once `done` holds for them. */
async function traceOf(traceId: string, done: (spans: SeenSpan[]) => boolean, what: string): Promise<SeenSpan[]> {
  const of = () => receiver.spans.filter((s) => s.traceId === traceId);
  await until(
    () => done(of()),
    20_000,
    `${what} (spans so far: ${of()
      .map((s) => s.name)
      .join(', ')})`,
  );
  return of();
}

async function stdio(args: string[], service = 'front'): Promise<WiredClient> {
  const w = await stdioClient(['--threads', '1', ...args], {}, otlpEnv(receiver, service));
  cleanup.push(() => w.close());
  return w;
}

describe('serve over stdio, exporting OTLP http/json', () => {
  it('a plain call, a cancelled call, a hard stop and a task, each its own tree', async () => {
    const w = await stdio(['--grace-ms', '100']);
    // Plain.
    const plain = newTraceId();
    expect(
      (await w.client.callTool({ name: 'spin', arguments: { ms: 5 }, _meta: { traceparent: traceparent(plain) } }))
        .isError,
    ).toBeFalsy();
    let spans = await traceOf(
      plain,
      (s) => s.some((x) => x.name === 'tools/call spin') && s.some((x) => x.name === 'stage report'),
      'the plain call',
    );
    const call = one(spans, 'tools/call spin');
    expect(call.service).toBe('front');
    expect(call.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'spin',
      'network.transport': 'pipe',
      'mcp_cancel_pool.outcome': 'completed',
    });
    expect(call.parentSpanId).toBe('00f067aa0ba902b7');
    expect(
      childrenOf(spans, call).map((s) => s.name),
      render(spans, call, KEYS),
    ).toEqual(['pool.wait', 'pool.run spin']);
    expect(childrenOf(spans, one(spans, 'pool.run spin')).map((s) => s.name)).toEqual(['stage burn', 'stage report']);

    // Cancelled by notifications/cancelled while it runs.
    const cancelled = newTraceId();
    const abort = new AbortController();
    await expect(
      w.client.callTool(
        { name: 'spin', arguments: { ms: 20_000 }, _meta: { traceparent: traceparent(cancelled) } },
        CallToolResultSchema,
        { signal: abort.signal, onprogress: () => abort.abort('no') },
      ),
    ).rejects.toThrow();
    spans = await traceOf(
      cancelled,
      (s) =>
        s.some((x) => x.name === 'tools/call spin') &&
        s.some((x) => x.name === 'pool.run spin') &&
        s.some((x) => x.name === 'cancel'),
      'the cancelled call',
    );
    let tree = render(spans, one(spans, 'tools/call spin'), KEYS);
    expect(one(spans, 'tools/call spin').attributes['mcp_cancel_pool.outcome'], tree).toBe('cancelled');
    expect(one(spans, 'cancel').attributes, tree).toMatchObject({
      'mcp_cancel_pool.cancel.source': 'notification',
      'mcp_cancel_pool.cancel.winner': 'cancel',
      'mcp_cancel_pool.cancel.from': 'running',
    });
    expect(one(spans, 'pool.run spin').attributes, tree).toMatchObject({
      'mcp_cancel_pool.outcome': 'cancelled',
      'mcp_cancel_pool.hard_stop': false,
    });

    // A hard stop: the tool ignores its checkpoints, the grace period ends, its thread is terminated.
    const hard = newTraceId();
    const abort2 = new AbortController();
    await expect(
      w.client.callTool(
        { name: 'spin', arguments: { ms: 60_000, cooperative: false }, _meta: { traceparent: traceparent(hard) } },
        CallToolResultSchema,
        { signal: abort2.signal, onprogress: () => abort2.abort('no') },
      ),
    ).rejects.toThrow();
    spans = await traceOf(
      hard,
      (s) => s.some((x) => x.name === 'pool.run spin') && s.some((x) => x.name === 'cancel'),
      'the hard stop',
    );
    tree = render(spans, one(spans, 'tools/call spin'), KEYS);
    expect(one(spans, 'cancel').attributes['mcp_cancel_pool.hard_stop'], tree).toBe(true);
    expect(
      one(spans, 'pool.run spin').events.map((e) => e.name),
      tree,
    ).toContain('hard_stop');

    // A task (2025): answered at once; its job's spans still hang under the call that created it.
    const task = newTraceId();
    const created = await w.client.request(
      {
        method: 'tools/call',
        params: { name: 'spin', arguments: { ms: 5 }, task: {}, _meta: { traceparent: traceparent(task) } },
      },
      z.object({ task: z.object({ taskId: z.string() }) }).passthrough(),
    );
    spans = await traceOf(
      task,
      (s) => s.some((x) => x.name === 'tools/call spin') && s.some((x) => x.name === 'stage report'),
      'the task',
    );
    const taskCall = one(spans, 'tools/call spin');
    tree = render(spans, taskCall, KEYS);
    expect(taskCall.attributes, tree).toMatchObject({
      'mcp_cancel_pool.outcome': 'task',
      'mcp_cancel_pool.task.id': created.task.taskId,
    });
    expect(one(spans, 'pool.run spin').parentSpanId, tree).toBe(taskCall.spanId);
    expect(w.transport.stderr).toBeDefined();
  });

  it('metrics per the conventions when OTEL_METRICS_EXPORTER asks', async () => {
    const w = await stdioClient(
      ['--threads', '1'],
      {},
      { ...otlpEnv(receiver, 'metered'), OTEL_METRICS_EXPORTER: 'otlp', OTEL_METRIC_EXPORT_INTERVAL: '200' },
    );
    cleanup.push(() => w.close());
    await w.client.callTool({ name: 'spin', arguments: { ms: 1 } });
    await until(
      () =>
        receiver.metrics.some(
          (m) =>
            m.service === 'metered' &&
            m.name === 'mcp.server.operation.duration' &&
            m.attributes.some((a) => a['mcp.method.name'] === 'tools/call'),
        ),
      20_000,
      'mcp.server.operation.duration',
    );
    const point = receiver.metrics
      .flatMap((m) => (m.service === 'metered' && m.name === 'mcp.server.operation.duration' ? m.attributes : []))
      .find((a) => a['mcp.method.name'] === 'tools/call')!;
    expect(point).toMatchObject({ 'gen_ai.tool.name': 'spin', 'network.transport': 'pipe' });
    expect(point['jsonrpc.request.id']).toBeUndefined(); // no ids in metric attributes
  });

  it('--log-format json --log-level debug: a line per request, with its trace id', async () => {
    const w = await stdio(['--log-format', 'json', '--log-level', 'debug']);
    const id = newTraceId();
    await w.client.callTool({ name: 'spin', arguments: { ms: 1 }, _meta: { traceparent: traceparent(id) } });
    let text = '';
    // Lines written before this listener wait in the pipe's buffer: it gets them all, from the first.
    w.transport.stderr!.on('data', (d: Buffer) => (text += d.toString()));
    await until(() => text.includes(id), 10_000, 'the debug line of the call');
    expect(text).toContain('"msg":"telemetry: traces otlp http/json"');
    const lines = text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const line = lines.find((l) => l.trace_id === id)!;
    expect(line).toMatchObject({ level: 'debug', name: 'mcp-cancel-pool', trace_id: id });
    expect(String(line.msg)).toMatch(/^tools\/call spin: completed in /);
  });
});

describe('without the SDK packages', () => {
  it('a missing one is named in one line, and the server serves without telemetry', async () => {
    const hide = fileURLToPath(new URL('../dist-dev/test/fixtures/hide-otel.js', import.meta.url));
    const w = await stdioClient(
      ['--threads', '1'],
      {},
      { ...otlpEnv(receiver, 'bare'), NODE_OPTIONS: `--import=${hide}` },
    );
    cleanup.push(() => w.close());
    let text = '';
    w.transport.stderr!.on('data', (d: Buffer) => (text += d.toString()));
    expect((await w.client.callTool({ name: 'spin', arguments: { ms: 1 } })).isError).toBeFalsy();
    await until(() => text.includes('serving on stdio'), 10_000, 'the start-up lines');
    const lines = text.split('\n').filter((l) => l.includes('telemetry'));
    expect(lines).toEqual([
      '[mcp-cancel-pool] telemetry: the OTEL_* variables ask for telemetry, but @opentelemetry/exporter-trace-otlp-http is not installed (npm install @opentelemetry/exporter-trace-otlp-http); serving without telemetry',
    ]);
    expect(receiver.spans.filter((s) => s.service === 'bare')).toEqual([]);
  });
});

describe('serve over HTTP', () => {
  it('a call and a cancelled call over Streamable HTTP: tcp, its session id, the same trees', async () => {
    const child = spawn(process.execPath, [CLI, 'serve', '--transport', 'http', '--port', '0', '--threads', '1'], {
      stdio: 'pipe',
      env: { ...process.env, ...otlpEnv(receiver, 'http-front') },
    });
    cleanup.push(() => stopChild(child));
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    await until(() => /listening on (http:\/\/\S+)/.test(stderr), 60_000, 'the HTTP server');
    const url = new URL(/listening on (http:\/\/\S+)/.exec(stderr)![1]!);
    expect(stderr).toContain('telemetry: traces otlp http/json');
    const client = new Client({ name: 'otel-http', version: '0' });
    const transport = new StreamableHTTPClientTransport(url);
    await client.connect(transport);
    cleanup.push(() => client.close());
    const plain = newTraceId();
    await client.callTool({ name: 'spin', arguments: { ms: 5 }, _meta: { traceparent: traceparent(plain) } });
    let spans = await traceOf(
      plain,
      (s) => s.some((x) => x.name === 'tools/call spin') && s.some((x) => x.name === 'stage report'),
      'the HTTP call',
    );
    const call = one(spans, 'tools/call spin');
    expect(call.attributes).toMatchObject({
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
      'mcp.session.id': transport.sessionId,
    });
    expect(childrenOf(spans, call).map((s) => s.name)).toEqual(['pool.wait', 'pool.run spin']);

    const cancelled = newTraceId();
    const abort = new AbortController();
    await expect(
      client.callTool(
        { name: 'spin', arguments: { ms: 20_000 }, _meta: { traceparent: traceparent(cancelled) } },
        CallToolResultSchema,
        { signal: abort.signal, onprogress: () => abort.abort('no') },
      ),
    ).rejects.toThrow();
    spans = await traceOf(
      cancelled,
      (s) => s.some((x) => x.name === 'cancel') && s.some((x) => x.name === 'pool.run spin'),
      'the cancelled HTTP call',
    );
    expect(
      one(spans, 'cancel').attributes,
      render(spans, spans.find((s) => s.name === 'tools/call spin') ?? one(spans, 'cancel'), KEYS),
    ).toMatchObject({ 'mcp_cancel_pool.cancel.winner': 'cancel' });
  });
});

describe('across hosts (a real redis-server)', () => {
  let redis: RedisProcess;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it("the worker host's spans join the front end's trace: the context travels in the signed job", async () => {
    const queue = `otel-${Date.now()}`;
    const saved = { ...process.env };
    Object.assign(process.env, otlpEnv(receiver, 'host')); // startHost's child inherits this process's environment
    let host: HostProcess;
    try {
      host = await startHost(redis.url, queue, ['--threads', '1', '--grace-ms', '100']);
    } finally {
      for (const k of Object.keys(otlpEnv(receiver, 'host'))) if (saved[k] === undefined) delete process.env[k];
    }
    cleanup.push(() => host.stop());
    const w = await stdioClient(['--redis', redis.url, '--queue', queue], {}, otlpEnv(receiver, 'front'));
    cleanup.push(() => w.close());
    await until(
      async () => (await w.client.callTool({ name: 'spin', arguments: { ms: 0 } })).isError !== true,
      60_000,
      'the front end on Redis',
    );

    const plain = newTraceId();
    await w.client.callTool({ name: 'spin', arguments: { ms: 5 }, _meta: { traceparent: traceparent(plain) } });
    let spans = await traceOf(
      plain,
      (s) =>
        s.some((x) => x.name === 'tools/call spin') &&
        s.some((x) => x.name === 'host.job spin') &&
        s.some((x) => x.name === 'stage report'),
      'the call across hosts',
    );
    const call = one(spans, 'tools/call spin');
    const onHost = one(spans, 'host.job spin');
    const tree = render(spans, call, KEYS);
    expect(call.service).toBe('front');
    expect(onHost.service, tree).toBe('host');
    expect(onHost.parentSpanId, tree).toBe(call.spanId);
    expect(onHost.attributes, tree).toMatchObject({
      'mcp_cancel_pool.outcome': 'completed',
      'mcp_cancel_pool.answered': true,
    });
    // The host's once-a-second sweep may have tried to stop it between its completion and its answer reaching
    // Redis: that attempt is recorded, as every cancel is, and it lost.
    const onHostChildren = childrenOf(spans, onHost);
    expect(
      onHostChildren.filter((s) => s.name !== 'cancel').map((s) => s.name),
      tree,
    ).toEqual(['pool.wait', 'pool.run spin']);
    for (const lost of onHostChildren.filter((s) => s.name === 'cancel'))
      expect(lost.attributes, tree).toMatchObject({ 'mcp_cancel_pool.cancel.winner': 'completion' });
    expect(one(spans, 'pool.run spin').service).toBe('host');

    // Cancelled at the front end: the host's cancel says the front end asked, and that the cancel won there.
    const cancelled = newTraceId();
    const abort = new AbortController();
    await expect(
      w.client.callTool(
        { name: 'spin', arguments: { ms: 20_000 }, _meta: { traceparent: traceparent(cancelled) } },
        CallToolResultSchema,
        { signal: abort.signal, onprogress: () => abort.abort('no') },
      ),
    ).rejects.toThrow();
    spans = await traceOf(
      cancelled,
      (s) =>
        s.filter((x) => x.name === 'cancel').length === 2 &&
        s.some((x) => x.name === 'host.job spin') &&
        s.some((x) => x.name === 'tools/call spin'),
      'the call cancelled across hosts',
    );
    // The front end's cancel: the client asked, and Redis decided for the cancel.
    expect(one(spans, 'cancel', (s) => s.service === 'front').attributes).toMatchObject({
      'mcp_cancel_pool.cancel.source': 'notification',
      'mcp_cancel_pool.cancel.winner': 'cancel',
    });
    const hostCancel = one(spans, 'cancel', (s) => s.service === 'host');
    expect(hostCancel.attributes, render(spans, one(spans, 'tools/call spin'), KEYS)).toMatchObject({
      'mcp_cancel_pool.cancel.source': 'front_end',
      'mcp_cancel_pool.cancel.winner': 'cancel',
    });
    expect(one(spans, 'host.job spin').attributes['mcp_cancel_pool.outcome']).toBe('cancelled');
  });

  it("a 2026 call parked on one front end and retried on another: the retry's span is in the first round's trace, its child", async () => {
    const queue = `otel-fronts-${Date.now()}`;
    const key = join(mkdtempSync(join(tmpdir(), 'otel-fronts-')), 'cluster.key');
    writeFileSync(key, `${'c7'.repeat(32)}\n`, { mode: 0o600 });
    const tools = fileURLToPath(new URL('../dist-dev/test/fixtures/mrtr-tools.js', import.meta.url));
    const saved = { ...process.env };
    const started: (HostProcess | HttpServerProcess)[] = [];
    try {
      Object.assign(process.env, otlpEnv(receiver, 'host'));
      started.push(await startHost(redis.url, queue, ['--threads', '1', '--cluster-key-file', key, '--tools', tools]));
      for (const name of ['front-a', 'front-b']) {
        Object.assign(process.env, otlpEnv(receiver, name));
        started.push(
          await startHttpServer(['--redis', redis.url, '--queue', queue, '--cluster-key-file', key, '--tools', tools]),
        );
      }
    } finally {
      for (const k of Object.keys(process.env)) if (saved[k] === undefined) delete process.env[k];
      Object.assign(process.env, saved);
    }
    for (const p of started) cleanup.push(() => p.stop());
    const [, a, b] = started as [HostProcess, HttpServerProcess, HttpServerProcess];
    let n = 0;
    const post = async (url: URL, params: Record<string, unknown>) => {
      const body = modernRequest(
        `x${n++}`,
        'tools/call',
        params,
        {},
        { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } },
      );
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...modernHeaders(body),
        },
        body: JSON.stringify(body),
      });
      return messagesIn(await res.text()).find((m) => m.id === body.id)?.result as Record<string, unknown> | undefined;
    };
    for (const f of [a, b])
      await until(
        async () => {
          const r = await post(f.url, { name: 'spin', arguments: { ms: 0 } });
          return r !== undefined && r.isError !== true;
        },
        60_000,
        'the front end on Redis',
      );

    const traceId = newTraceId();
    const first = await post(a.url, {
      name: 'greet_user',
      arguments: {},
      _meta: { traceparent: traceparent(traceId) },
    });
    expect(first?.resultType).toBe('input_required');
    const [question] = Object.keys(first!.inputRequests as object) as [string];
    // The retry on the other front end, without a traceparent of its own.
    const done = await post(b.url, {
      name: 'greet_user',
      arguments: {},
      requestState: first!.requestState,
      inputResponses: { [question]: { action: 'accept', content: { name: 'Ada' } } },
    });
    expect(done?.resultType).toBe('complete');
    const spans = await traceOf(
      traceId,
      (s) => s.filter((x) => x.name === 'tools/call greet_user').length === 2,
      'both rounds in one trace',
    );
    const rounds = spans.filter((x) => x.name === 'tools/call greet_user');
    const onA = one(rounds, 'tools/call greet_user', (x) => x.service === 'front-a');
    const onB = one(rounds, 'tools/call greet_user', (x) => x.service === 'front-b');
    expect(onB.parentSpanId, render(spans, onA, KEYS)).toBe(onA.spanId);
  }, 180_000);
});

describe('OTEL_TRACES_EXPORTER=console over stdio', () => {
  it('each span is one JSON line on stderr; stdout carries only JSON-RPC', async () => {
    const traceId = newTraceId();
    const s = new LineServer(['--threads', '1', '--spare-threads', '0'], [], {
      OTEL_TRACES_EXPORTER: 'console',
      OTEL_METRICS_EXPORTER: 'console',
      OTEL_METRIC_EXPORT_INTERVAL: '100',
      OTEL_SERVICE_NAME: 'console-front',
    });
    cleanup.push(async () => s.kill());
    s.send(
      modernRequest(1, 'tools/call', {
        name: 'spin',
        arguments: { ms: 5 },
        _meta: { traceparent: traceparent(traceId) },
      }),
    );
    expect(((await s.answer(1, 60_000)).result as { isError?: boolean }).isError).toBeFalsy();
    const spanLines = () =>
      s.stderr
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((o) => o.traceId === traceId);
    await until(() => spanLines().some((o) => o.name === 'tools/call spin'), 20_000, 'the span line on stderr');
    await until(() => s.stderr.includes('"mcp.server.operation.duration"'), 20_000, 'the metric line on stderr');
    const call = spanLines().find((o) => o.name === 'tools/call spin')!;
    expect(call).toMatchObject({
      kind: 1,
      parentSpanContext: { traceId, spanId: '00f067aa0ba902b7' },
      resource: { attributes: { 'service.name': 'console-front' } },
    });
    expect(call.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'spin',
      'mcp_cancel_pool.outcome': 'completed',
    });
    expect(spanLines().map((o) => o.name)).toEqual(expect.arrayContaining(['pool.wait', 'pool.run spin']));
    expect(s.stderr).toContain('telemetry: traces console (stderr), metrics console (stderr)');
    // Every stdout line parsed as JSON-RPC; no span, metric or log line among them.
    expect(s.lines.length).toBeGreaterThan(0);
    for (const line of s.lines) expect(line).toMatchObject({ jsonrpc: '2.0' });
  });
});
