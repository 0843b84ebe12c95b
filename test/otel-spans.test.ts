/**
 * Span trees in process, from the SDK's in-memory exporter: a real SDK client
 * over an in-memory transport, the real server and a real Piscina pool. The
 * server span of a call follows the MCP conventions and its `_meta` parent
 * (SEP-414); under it, the wait for a slot, the run on a worker thread with
 * its stages (timed in the worker, which runs no SDK), and a cancel with its
 * source, its winner and, when the thread had to go, its hard stop. With no
 * SDK registered nothing is traced at all.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { z } from 'zod';
import { Executor } from '../dist/src/index.js';
import { createMcpServer } from '../dist/src/entries/server.js';
import { GuardedTransport, newWireStats } from '../dist/src/entries/server.js';
import { JobTrace } from '../dist/src/otel/job-trace.js';
import { liveMeter, liveTracer } from '../dist/src/otel/tracer.js';
import { tracedHandler } from '../dist/src/otel/server-span.js';
import { activeCarrier } from '../dist/src/otel/carrier.js';
import { PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { InMemoryTransport as InMemory2 } from '@modelcontextprotocol/server';
import { serveStdio as sdkServeStdio } from '@modelcontextprotocol/server/stdio';
import { InputWaits } from '../dist/src/asks/input-waits.js';
import { TaskRunner } from '../dist/src/tasks/runner.js';
import { modernRequest } from './modern-helpers.js';
import { CLIENT_TOOLS, until } from './helpers.js';
import { childrenOf, one, render, type SeenSpan } from './otel-helpers.js';
import { killMarked, marked, newMarker } from './child-procs.js';

const exporter = new InMemorySpanExporter();
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

/** The links of the finished span `spanId`: the span id each names, and why. */
function linksOf(spanId: string): { traceId: string; spanId: string; reason: unknown }[] {
  const span = exporter.getFinishedSpans().find((x) => x.spanContext().spanId === spanId);
  return (span?.links ?? []).map((l) => ({
    traceId: l.context.traceId,
    spanId: l.context.spanId,
    reason: l.attributes?.['mcp_cancel_pool.link.reason'],
  }));
}

const MRTR_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/mrtr-tools.js', import.meta.url));
const CHILD_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/child-tools.js', import.meta.url));
const ASKABLE = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };

/** A 2026 connection in process, wired as stdio serves it (src/transport/stdio/serve.ts), spoken to in raw JSON-RPC. */
async function connect2026() {
  const executor = await Executor.create({ threads: 1, toolModules: [MRTR_TOOLS] });
  const wire = newWireStats();
  const [clientSide, serverSide] = InMemory2.createLinkedPair();
  const inputWaits = new InputWaits(executor);
  const guard = new GuardedTransport(serverSide, 'memory', executor, wire, {
    inputWaits,
    abortMeansCancel: false,
  });
  const tasks = new TaskRunner(executor);
  const handle = sdkServeStdio(
    () => createMcpServer(executor, wire, 'test', () => ({ guard, wraps: false, caller: 'memory' }), tasks),
    { transport: guard, onerror: () => undefined },
  );
  const got: Record<string, unknown>[] = [];
  clientSide.onmessage = (m) => void got.push(m);
  await clientSide.start();
  return {
    send: (m: unknown) => clientSide.send(m as never),
    answer: async (id: number) => {
      await until(() => got.some((m) => m.id === id && m.method === undefined), 20_000, `the answer to ${id}`);
      return got.find((m) => m.id === id && m.method === undefined)!.result as Record<string, unknown>;
    },
    close: async () => {
      await handle.close();
      inputWaits.close();
      await tasks.close();
      await executor.close();
    },
  };
}

function seen(): SeenSpan[] {
  const ms = (t: readonly [number, number]) => t[0] * 1000 + t[1] / 1e6;
  return exporter.getFinishedSpans().map((s: ReadableSpan) => ({
    name: s.name,
    traceId: s.spanContext().traceId,
    spanId: s.spanContext().spanId,
    parentSpanId: s.parentSpanContext?.spanId,
    kind: s.kind,
    attributes: s.attributes,
    events: s.events.map((e) => ({ name: e.name, attributes: e.attributes ?? {} })),
    start: ms(s.startTime),
    end: ms(s.endTime),
  }));
}

async function connect(options: { graceMs?: number; toolModules?: string[] } = {}) {
  const executor = await Executor.create({ threads: 1, toolModules: [CLIENT_TOOLS], ...options });
  const wire = newWireStats();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const guard = new GuardedTransport(serverSide, 'memory', executor, wire);
  const server = createMcpServer(executor, wire, 'test', () => ({ guard, wraps: false, caller: 'memory' }));
  await server.connect(guard);
  const client = new Client({ name: 'otel-test', version: '0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request.params);
    return { action: 'accept', content: { name: 'Ada' } };
  });
  await client.connect(clientSide);
  const asked: unknown[] = [];
  return {
    client,
    asked,
    executor,
    close: async () => {
      await client.close();
      await server.close();
      await executor.close();
    },
  };
}

let provider: BasicTracerProvider;
const open: (() => Promise<void>)[] = [];

beforeAll(() => {
  provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
});
afterEach(async () => {
  for (const close of open.splice(0)) await close();
  exporter.reset();
});
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
});

const KEYS = [
  'mcp.method.name',
  'gen_ai.tool.name',
  'mcp_cancel_pool.cancel.source',
  'mcp_cancel_pool.cancel.winner',
  'mcp_cancel_pool.hard_stop',
  'mcp_cancel_pool.outcome',
  'thread.id',
];

describe('spans of a tools/call', () => {
  it('a plain call: the server span under the _meta parent, then the wait, the run on its thread and each stage', async () => {
    const c = await connect();
    open.push(c.close);
    const result = await c.client.callTool({
      name: 'spin',
      arguments: { ms: 5 },
      _meta: { traceparent: `00-${TRACE_ID}-${PARENT}-01`, baggage: 'tenant=a' },
    });
    expect(result.isError).toBeFalsy();
    await until(() => seen().some((s) => s.name === 'tools/call spin'), 5000, 'the server span');
    const spans = seen();
    const call = one(spans, 'tools/call spin');
    expect(call).toMatchObject({ traceId: TRACE_ID, parentSpanId: PARENT, kind: SpanKind.SERVER });
    expect(call.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'spin',
      'gen_ai.operation.name': 'execute_tool',
      'network.transport': 'pipe',
      'mcp.protocol.version': '2025-11-25',
      'mcp_cancel_pool.outcome': 'completed',
    });
    expect(typeof call.attributes['jsonrpc.request.id']).toBe('string');
    expect(call.attributes['error.type']).toBeUndefined();
    const tree = render(spans, call, KEYS);
    expect(
      childrenOf(spans, call).map((s) => s.name),
      tree,
    ).toEqual(['pool.wait', 'pool.run spin']);
    const run = one(spans, 'pool.run spin');
    expect(run.attributes['thread.id'], tree).toEqual(expect.any(Number));
    expect(
      childrenOf(spans, run).map((s) => s.name),
      tree,
    ).toEqual(['stage burn', 'stage report']);
    for (const stage of childrenOf(spans, run)) {
      expect(stage.attributes['thread.id']).toBe(run.attributes['thread.id']);
      expect(stage.start).toBeGreaterThanOrEqual(run.start - 1); // the worker's clock and ours agree to well under a millisecond
      expect(stage.end).toBeLessThanOrEqual(run.end + 1);
    }
    expect(spans.filter((s) => s.name !== 'initialize').every((s) => s.traceId === TRACE_ID)).toBe(true); // initialize came without a traceparent
  });

  it('a tool error is error.type tool_error; other methods get server spans too', async () => {
    const c = await connect();
    open.push(c.close);
    const bad = await c.client.callTool({ name: 'spin', arguments: { ms: -1 } });
    expect(bad.isError).toBe(true);
    await c.client.listTools();
    await until(() => seen().some((s) => s.name === 'tools/list'), 5000, 'tools/list span');
    const spans = seen();
    expect(one(spans, 'tools/call spin').attributes).toMatchObject({ 'error.type': 'tool_error' });
    expect(one(spans, 'tools/list').attributes).toMatchObject({ 'mcp.method.name': 'tools/list' });
    expect(one(spans, 'initialize').kind).toBe(SpanKind.SERVER);
  });

  it('a cancelled call: the cancel names its source and winner, and lasts until the work stopped', async () => {
    const c = await connect();
    open.push(c.close);
    const abort = new AbortController();
    const call = c.client.callTool(
      { name: 'spin', arguments: { ms: 10_000 }, _meta: { traceparent: `00-${TRACE_ID}-${PARENT}-01` } },
      CallToolResultSchema,
      { signal: abort.signal, onprogress: () => abort.abort('changed my mind') },
    );
    await expect(call).rejects.toThrow();
    await until(() => seen().some((s) => s.name === 'tools/call spin'), 10_000, 'the server span');
    const spans = seen();
    const server = one(spans, 'tools/call spin');
    const tree = render(spans, server, KEYS);
    expect(server.attributes['mcp_cancel_pool.outcome'], tree).toBe('cancelled');
    const cancel = one(spans, 'cancel');
    expect(cancel.parentSpanId, tree).toBe(server.spanId);
    expect(cancel.attributes, tree).toMatchObject({
      'mcp_cancel_pool.cancel.source': 'notification',
      'mcp_cancel_pool.cancel.winner': 'cancel',
      'mcp_cancel_pool.cancel.from': 'running',
    });
    expect(cancel.attributes['mcp_cancel_pool.hard_stop']).toBeUndefined();
    const run = one(spans, 'pool.run spin');
    expect(run.attributes, tree).toMatchObject({
      'mcp_cancel_pool.outcome': 'cancelled',
      'mcp_cancel_pool.hard_stop': false,
    });
    expect(
      run.events.map((e) => e.name),
      tree,
    ).toEqual(expect.arrayContaining(['cancel', 'stop noticed']));
    // The stopped stage is a span of its own, timed by the worker, ending when the worker noticed the stop.
    expect(childrenOf(spans, run).map((s) => s.name)).toEqual(['stage burn']);
    expect(cancel.end).toBeLessThanOrEqual(run.end + 1);
  });

  it("a cancelled call's child process: each kill of its group is an event on the run span", async () => {
    const c = await connect({ toolModules: [CHILD_TOOLS] });
    open.push(c.close);
    const m = newMarker('otel');
    open.push(async () => killMarked(m));
    const abort = new AbortController();
    const call = c.client.callTool(
      { name: 'busy_child', arguments: { marker: m, trapTerm: true } },
      CallToolResultSchema,
      { signal: abort.signal },
    );
    // Its pid is in the call's row (the main thread signals it, not the worker), and its grandchild runs: the shell
    // started it after its trap, so a SIGTERM now is ignored (sooner, a shell still starting dies of it).
    await until(() => c.executor.stats().childrenAlive === 1, 60_000, 'the child counted');
    await until(() => marked(m).length >= 2, 60_000, 'the shell past its trap');
    abort.abort('changed my mind');
    await expect(call).rejects.toThrow();
    // It ignores SIGTERM: SIGKILL follows after the grace, and the group is gone.
    await until(() => marked(m).length === 0, 60_000, 'the child gone');
    await until(() => seen().some((s) => s.name === 'pool.run busy_child'), 10_000, 'the run span');
    const run = one(seen(), 'pool.run busy_child');
    const kills = run.events.filter((e) => e.name === 'child_kill');
    expect(kills.map((e) => e.attributes['mcp_cancel_pool.child.signal'])).toEqual(['SIGTERM', 'SIGKILL']);
    expect(new Set(kills.map((e) => e.attributes['process.pid'])).size).toBe(1);
    expect(c.executor.stats()).toMatchObject({ childrenKilled: 1, childrenAlive: 0 });
  });

  it('a hard stop: the thread that ignored its checkpoints is terminated, and the cancel says so', async () => {
    const c = await connect({ graceMs: 50 });
    open.push(c.close);
    const abort = new AbortController();
    const call = c.client.callTool(
      { name: 'spin', arguments: { ms: 60_000, cooperative: false } },
      CallToolResultSchema,
      { signal: abort.signal, onprogress: () => abort.abort('stop') },
    );
    await expect(call).rejects.toThrow();
    await until(() => seen().some((s) => s.name === 'pool.run spin'), 20_000, 'the run span');
    const spans = seen();
    const tree = render(spans, one(spans, 'tools/call spin'), KEYS);
    expect(one(spans, 'cancel').attributes, tree).toMatchObject({
      'mcp_cancel_pool.cancel.winner': 'cancel',
      'mcp_cancel_pool.hard_stop': true,
    });
    const run = one(spans, 'pool.run spin');
    expect(run.attributes, tree).toMatchObject({
      'mcp_cancel_pool.outcome': 'cancelled',
      'mcp_cancel_pool.hard_stop': true,
    });
    expect(
      run.events.map((e) => e.name),
      tree,
    ).toContain('hard_stop');
  });

  it("a tool's request to the client is a CLIENT span under the run, and carries the trace in its _meta", async () => {
    const c = await connect();
    open.push(c.close);
    await c.client.callTool({ name: 'ask_name', arguments: {}, _meta: { traceparent: `00-${TRACE_ID}-${PARENT}-01` } });
    await until(() => seen().some((s) => s.name === 'tools/call ask_name'), 5000, 'the server span');
    const spans = seen();
    const ask = one(spans, 'elicitation/create');
    expect(ask.kind).toBe(SpanKind.CLIENT);
    expect(ask.parentSpanId).toBe(one(spans, 'pool.run ask_name').spanId);
    const meta = (c.asked[0] as { _meta?: { traceparent?: string } })._meta;
    expect(meta?.traceparent).toBe(`00-${TRACE_ID}-${ask.spanId}-01`);
  });
});

describe('spans of a task', () => {
  it("tasks/cancel: the task job's cancel, under the call that created the task, names tasks_cancel", async () => {
    const c = await connect();
    open.push(c.close);
    const created = await c.client.request(
      {
        method: 'tools/call',
        params: {
          name: 'spin',
          arguments: { ms: 20_000 },
          task: {},
          _meta: { traceparent: `00-${TRACE_ID}-${PARENT}-01` },
        },
      },
      z.object({ task: z.object({ taskId: z.string() }) }).passthrough(),
    );
    await until(() => seen().some((s) => s.name === 'tools/call spin'), 5000, 'the creating call');
    await new Promise((r) => setTimeout(r, 50)); // let it reach its thread
    await c.client.request(
      { method: 'tasks/cancel', params: { taskId: created.task.taskId } },
      z.object({}).passthrough(),
    );
    await until(
      () =>
        seen().some((s) => s.name === 'cancel') &&
        seen().some((s) => s.name === 'pool.run spin' || s.name === 'pool.wait'),
      10_000,
      'the cancel',
    );
    const spans = seen();
    const call = one(spans, 'tools/call spin');
    const tree = render(spans, call, KEYS);
    expect(call.attributes, tree).toMatchObject({
      'mcp_cancel_pool.outcome': 'task',
      'mcp_cancel_pool.task.id': created.task.taskId,
    });
    const cancel = one(spans, 'cancel');
    expect(cancel.parentSpanId, tree).toBe(call.spanId);
    expect(cancel.attributes, tree).toMatchObject({
      'mcp_cancel_pool.cancel.source': 'tasks_cancel',
      'mcp_cancel_pool.cancel.winner': 'cancel',
    });
    expect(one(spans, 'tasks/cancel').kind).toBe(SpanKind.SERVER);
  });
});

describe("every round of a 2026 call is in its first round's trace", () => {
  const OTHER_TRACE = '0af7651916cd43dd8448eb211c80319c';
  const OTHER_PARENT = 'b7ad6b7169203331';
  /** Round 1 with the client's traceparent, then its retry with `retryMeta`: the two server spans. */
  async function twoRounds(retryMeta: Record<string, unknown>) {
    const c = await connect2026();
    open.push(c.close);
    void c.send(
      modernRequest(
        1,
        'tools/call',
        { name: 'greet_user', arguments: {}, _meta: { traceparent: `00-${TRACE_ID}-${PARENT}-01` } },
        {},
        ASKABLE,
      ),
    );
    const first = await c.answer(1);
    expect(first.resultType).toBe('input_required');
    const [key] = Object.keys(first.inputRequests as object) as [string];
    void c.send(
      modernRequest(
        2,
        'tools/call',
        {
          name: 'greet_user',
          arguments: {},
          requestState: first.requestState,
          inputResponses: { [key]: { action: 'accept', content: { name: 'Ada' } } },
          _meta: retryMeta,
        },
        {},
        ASKABLE,
      ),
    );
    expect(((await c.answer(2)).content as { text: string }[])[0]!.text).toMatch(/^hello, Ada/);
    await until(
      () => seen().filter((x) => x.name === 'tools/call greet_user').length === 2,
      5000,
      "both rounds' spans",
    );
    const spans = seen();
    const round = (id: string) => one(spans, 'tools/call greet_user', (x) => x.attributes['jsonrpc.request.id'] === id);
    return { spans, first: round('1'), retry: round('2') };
  }

  it("a retry without a traceparent: its span is a child of the first round's, and the job stays under the first round", async () => {
    const { spans, first, retry } = await twoRounds({});
    expect(first).toMatchObject({ traceId: TRACE_ID, parentSpanId: PARENT });
    expect(first.attributes['mcp_cancel_pool.outcome']).toBe('input_required');
    expect(retry, render(spans, first, KEYS)).toMatchObject({ traceId: TRACE_ID, parentSpanId: first.spanId });
    expect(retry.attributes['mcp_cancel_pool.outcome']).toBe('completed');
    expect(linksOf(retry.spanId)).toEqual([]);
    expect(one(spans, 'pool.run greet_user').parentSpanId).toBe(first.spanId);
  });

  it("a retry with a traceparent of another trace: the client's parent, and a Link to the first round", async () => {
    const { first, retry } = await twoRounds({ traceparent: `00-${OTHER_TRACE}-${OTHER_PARENT}-01` });
    expect(retry).toMatchObject({ traceId: OTHER_TRACE, parentSpanId: OTHER_PARENT });
    expect(linksOf(retry.spanId)).toEqual([{ traceId: TRACE_ID, spanId: first.spanId, reason: 'first_round' }]);
  });

  it("a retry that resends the first round's traceparent: the client's parent, already the same trace, no link", async () => {
    const { retry } = await twoRounds({ traceparent: `00-${TRACE_ID}-${PARENT}-01` });
    expect(retry).toMatchObject({ traceId: TRACE_ID, parentSpanId: PARENT });
    expect(linksOf(retry.spanId)).toEqual([]);
  });
});

describe('tasks/* requests join the trace of the call that created the task', () => {
  it('without a traceparent: children of the creating tools/call; with one of another trace: its parent and a Link', async () => {
    const c = await connect();
    open.push(c.close);
    const OTHER = `00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01`;
    const created = await c.client.request(
      {
        method: 'tools/call',
        params: {
          name: 'spin',
          arguments: { ms: 20_000 },
          task: {},
          _meta: { traceparent: `00-${TRACE_ID}-${PARENT}-01` },
        },
      },
      z.object({ task: z.object({ taskId: z.string() }) }).passthrough(),
    );
    const { taskId } = created.task;
    const any = z.object({}).passthrough();
    await c.client.request({ method: 'tasks/get', params: { taskId } }, any);
    await c.client.request({ method: 'tasks/get', params: { taskId, _meta: { traceparent: OTHER } } }, any);
    await c.client.request({ method: 'tasks/cancel', params: { taskId } }, any);
    await c.client.request({ method: 'tasks/result', params: { taskId } }, any).catch(() => undefined); // cancelled: its answer may be an error
    await until(() => seen().some((x) => x.name === 'tasks/result'), 10_000, 'the tasks/result span');
    const spans = seen();
    const call = one(spans, 'tools/call spin');
    const tree = render(spans, call, KEYS);
    const gets = spans.filter((x) => x.name === 'tasks/get').sort((a, b) => a.start - b.start);
    expect(gets).toHaveLength(2);
    expect(gets[0], tree).toMatchObject({ traceId: TRACE_ID, parentSpanId: call.spanId });
    expect(linksOf(gets[0]!.spanId)).toEqual([]);
    expect(gets[1]).toMatchObject({ traceId: '0af7651916cd43dd8448eb211c80319c', parentSpanId: 'b7ad6b7169203331' });
    expect(linksOf(gets[1]!.spanId)).toEqual([{ traceId: TRACE_ID, spanId: call.spanId, reason: 'task' }]);
    expect(one(spans, 'tasks/cancel'), tree).toMatchObject({ traceId: TRACE_ID, parentSpanId: call.spanId });
    expect(one(spans, 'tasks/result'), tree).toMatchObject({ traceId: TRACE_ID, parentSpanId: call.spanId });
  });

  it("a task id of no task (or another owner's) joins nothing: a root span", async () => {
    const c = await connect();
    open.push(c.close);
    await c.client
      .request({ method: 'tasks/get', params: { taskId: 'no-such-task' } }, z.object({}).passthrough())
      .catch(() => undefined);
    await until(() => seen().some((x) => x.name === 'tasks/get'), 5000, 'the tasks/get span');
    expect(one(seen(), 'tasks/get').parentSpanId).toBeUndefined();
  });
});

describe('with no SDK registered', () => {
  it('nothing is traced: no tracer, no job trace, no spans', async () => {
    trace.disable();
    try {
      expect(liveTracer()).toBeUndefined();
      expect(JobTrace.begin('spin')).toBeUndefined();
      const c = await connect();
      open.push(c.close);
      for (let i = 0; i < 20; i++) await c.client.callTool({ name: 'spin', arguments: { ms: 0 } });
      expect(exporter.getFinishedSpans()).toEqual([]);
    } finally {
      trace.setGlobalTracerProvider(provider);
    }
    expect(liveTracer()).toBeDefined();
  });

  it('the path a request and a job take with tracing off allocates nothing: a million trips through it start no garbage collection', async () => {
    trace.disable();
    const gcs: PerformanceEntry[] = [];
    const observer = new PerformanceObserver((list) => gcs.push(...list.getEntries()));
    observer.observe({ entryTypes: ['gc'] });
    try {
      const answer = Promise.resolve({ content: [] });
      const handler = tracedHandler(
        'tools/call',
        () => answer,
        () => '2025-11-25',
        () => false,
      );
      const request = { params: { name: 'spin' } };
      const ctx = { mcpReq: { id: 1 } } as never;
      for (let i = 0; i < 1000; i++) void handler(request, ctx); // warm: compiled before the measured loop
      const from = performance.now();
      let same = 0;
      for (let i = 0; i < 1_000_000; i++) {
        if (handler(request, ctx) === answer) same++;
        if (JobTrace.begin('spin') !== undefined || liveMeter() !== undefined || activeCarrier() !== undefined)
          throw new Error('traced with no SDK');
      }
      const to = performance.now();
      await new Promise((r) => setTimeout(r, 50)); // the observer hears of GCs asynchronously
      expect(same).toBe(1_000_000); // the handler's own promise, untouched: no wrapper promise either
      // 16 bytes a trip would be 16 MB: dozens of scavenges of the young generation.
      expect(gcs.filter((g) => g.startTime >= from && g.startTime <= to).map((g) => g.name)).toEqual([]);
    } finally {
      observer.disconnect();
      trace.setGlobalTracerProvider(provider);
    }
  });
});
