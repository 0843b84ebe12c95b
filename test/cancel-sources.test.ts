/**
 * Issue 62, the typed cancel source: who asked for a cancel is named where it
 * is asked, and that one value reaches both the metrics
 * (`mcp_cancel_pool_cancels_total{source}`) and the traces
 * (`mcp_cancel_pool.cancel.source`), for every source of the one list. The
 * task runner's own askers (the lease, the ttl, tasks/cancel, the owner's
 * session closing) are driven for real: the lease's cancel used to be
 * counted as `task_lease` but traced as `notification`, because metrics and
 * traces each read it back out of the reason text with a map of their own.
 * The debug log's line for each cancel names the same source. Real pool, the
 * metrics seam and an in-memory OpenTelemetry exporter.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { CANCEL_SOURCES, Executor, type CallBackend, type CancelSource } from '../dist/src/index.js';
import { Metrics } from '../dist/src/ops/metrics.js';
import { instrumentBackend } from '../dist/src/ops/instrument.js';
import { TaskRunner } from '../dist/src/tasks/runner.js';
import { Logger, setLogger } from '../dist/src/log/logger.js';
import { until } from './helpers.js';

const exporter = new InMemorySpanExporter();
let provider: BasicTracerProvider;
let executor: Executor;
let metrics: Metrics;
let backend: CallBackend;

beforeAll(async () => {
  provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  executor = await Executor.create({ threads: 1 });
  metrics = new Metrics('front', () => ({}), { processMetrics: false });
  backend = instrumentBackend(executor, metrics, { countCalls: false });
});
afterEach(() => {
  exporter.reset();
  metrics.cancels.reset();
});
afterAll(async () => {
  await executor.close();
  await provider.shutdown();
  trace.disable();
  context.disable();
});

/** Cancels that won, by source, as the metric counts them. */
async function counted(): Promise<Record<string, number>> {
  const got: Record<string, number> = {};
  for (const v of (await metrics.cancels.get()).values) got[String(v.labels.source)] = v.value;
  return got;
}

/** The sources the finished `cancel` spans name, sorted. */
function traced(): string[] {
  return exporter
    .getFinishedSpans()
    .filter((s) => s.name === 'cancel')
    .map((s) => String(s.attributes['mcp_cancel_pool.cancel.source']))
    .sort();
}

describe('a cancel carries its source to the metrics, the traces and the logs', () => {
  it('every source of the one list, asked through the backend, is counted and traced as itself', async () => {
    expect(new Set(CANCEL_SOURCES).size).toBe(CANCEL_SOURCES.length);
    const lines: string[] = [];
    setLogger(new Logger({ level: 'debug', format: 'json', write: (line) => void lines.push(line) }));
    const outcomes = CANCEL_SOURCES.map((source: CancelSource) => {
      const call = backend.reserve(`s-${source}`, 1);
      const outcome = call.start({ tool: 'spin', args: { ms: 20_000 } });
      void backend.requestCancel(`s-${source}`, 1, 'a reason for people, the same for every source', source);
      return outcome;
    });
    for (const o of await Promise.all(outcomes)) expect(o.kind).toBe('cancelled');
    const want = Object.fromEntries(CANCEL_SOURCES.map((s) => [s, 1]));
    expect(await counted()).toEqual(want);
    await until(() => traced().length === CANCEL_SOURCES.length, 10_000, 'a cancel span per source');
    expect(traced()).toEqual([...CANCEL_SOURCES].sort());
    setLogger(new Logger());
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.cancel_source);
    expect(logged.map((l) => l.cancel_source).sort()).toEqual([...CANCEL_SOURCES].sort());
    expect(logged.every((l) => l.msg === 'cancel: cancelled-queued' || l.msg === 'cancel: cancelled-running')).toBe(
      true,
    );
  });

  it('a cancel without a source is a client notification; a session closing without one, session_close', async () => {
    const a = backend.reserve('plain', 'a');
    const aDone = a.start({ tool: 'spin', args: { ms: 20_000 } });
    void backend.requestCancel('plain', 'a', 'task lease expired'); // the words alone say nothing of the source
    expect((await aDone).kind).toBe('cancelled');
    const b = backend.reserve('closing', 'b');
    const bDone = b.start({ tool: 'spin', args: { ms: 20_000 } });
    backend.cancelSession('closing', 'tasks/cancel');
    expect((await bDone).kind).toBe('cancelled');
    expect(await counted()).toEqual({ notification: 1, session_close: 1 });
    await until(() => traced().length === 2, 10_000, 'two cancel spans');
    expect(traced()).toEqual(['notification', 'session_close']);
  });
});

describe("the task runner's own cancels", () => {
  it('the lease (the defect: traced as notification), the ttl, tasks/cancel and the owner closing: each counted and traced alike', async () => {
    const long = { tool: 'spin', args: { ms: 20_000 } };
    // Leases of 1 ms on one runner, none on the other (whose tasks go by their ttl, tasks/cancel and their owner).
    const leasing = new TaskRunner(backend, { taskLeaseMs: 1, leaseClientTasks: true, sweepIntervalMs: 60_000 });
    const runner = new TaskRunner(backend, { taskLeaseMs: 0, sweepIntervalMs: 60_000 });
    try {
      await leasing.create('lease-owner', long);
      await runner.create('ttl-owner', { ...long, ttlMs: 1000 });
      const cancelled = await runner.create('cancel-owner', long);
      await runner.create('close-owner', long);
      await runner.sweep(Date.now() + 2000); // the ttl's time has come, nobody else's
      await runner.cancelTask('cancel-owner', cancelled.taskId);
      await runner.closeOwner('close-owner');
      await until(
        async () => Object.values(await counted()).reduce((a, b) => a + b, 0) === 4,
        10_000,
        'four cancels counted',
      );
      expect(await counted()).toEqual({ task_lease: 1, task_expired: 1, tasks_cancel: 1, session_close: 1 });
      await until(() => traced().length === 4, 10_000, 'four cancel spans');
      expect(traced()).toEqual(['session_close', 'task_expired', 'task_lease', 'tasks_cancel']);
    } finally {
      await leasing.close();
      await runner.close();
    }
  });
});
