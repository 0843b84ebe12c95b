/**
 * The Prometheus metrics, one registry per process, the same names on front
 * ends (`role="front"`) and worker hosts (`role="worker"`). Three feeds:
 * job events (src/executor/events.ts) for what happens to each local job,
 * the front end's backend seam (./instrument.ts) for cancels by source, and
 * snapshots read at scrape time ({@link MetricsSources}) for the gauges and
 * for counters the backend already keeps. Nothing here runs per call unless
 * metrics were asked for.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { JobOutcome } from '../backend/backend.js';

/** Which kind of process this is. */
export type Role = 'front' | 'worker';

/** Where a cancel that won came from: the one list metrics and traces share. */
export type { CancelSource } from '../state/cancel-source.js';

/** Read at each scrape; every field is optional (a worker host has no sessions, a front end on Redis no threads). */
export interface Snapshot {
  running?: number;
  queued?: number;
  threads?: number;
  tasksWorking?: number;
  tasksFinished?: number;
  /** Finished tasks removed before their ttl to bound the bytes of kept results. */
  tasksEvicted?: number;
  sessions?: number;
  workerHosts?: number;
  hardStops?: number;
  /** Child processes the tools started, the groups ended, the groups alive (a pool of this process only). */
  childrenStarted?: number;
  childrenKilled?: number;
  childrenAlive?: number;
  lateCancelsIgnored?: number;
  unknownCancelsIgnored?: number;
  responsesDropped?: number;
}

/** What the gauges and the backend-kept counters are read from, at scrape time. */
export type MetricsSources = () => Snapshot | Promise<Snapshot>;

const PREFIX = 'mcp_cancel_pool_';
/** Seconds: from a fraction of a millisecond (a cancel at a checkpoint) to minutes (long tools). */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** Outcome label values. */
export function outcomeLabel(outcome: JobOutcome): 'completed' | 'failed' | 'cancelled' | 'timed_out' {
  return outcome.kind === 'timedOut' ? 'timed_out' : outcome.kind;
}

/** Options for {@link Metrics}. */
export interface MetricsOptions {
  /**
   * Also collect prom-client's process metrics (CPU, memory, GC, event-loop lag). Their event-loop monitor wakes the
   * process every 10 ms and their GC observer runs JavaScript after every collection, so a process that nothing can
   * scrape goes without: an idle stdio server then sleeps instead of waking 100 times a second.
   * @default true
   */
  readonly processMetrics?: boolean;
}

/** The process's metrics; see the module comment. */
export class Metrics {
  readonly registry = new Registry();
  readonly calls: Counter<'tool' | 'outcome'>;
  readonly cancels: Counter<'source'>;
  readonly queueRefusals: Counter;
  readonly queueWait: Histogram;
  readonly runTime: Histogram;
  readonly cancelToStopped: Histogram;
  readonly cancelToSlotReused: Histogram;
  readonly checkpointGap: Histogram<'tool'>;
  private snapshot: Promise<Snapshot> | undefined;

  constructor(
    readonly role: Role,
    sources: MetricsSources,
    options: MetricsOptions = {},
  ) {
    const registers = [this.registry];
    this.registry.setDefaultLabels({ role });
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: PREFIX });
    this.calls = new Counter({
      name: `${PREFIX}calls_total`,
      help: 'Tool calls by tool and outcome (completed, failed, cancelled, timed_out).',
      labelNames: ['tool', 'outcome'],
      registers,
    });
    this.cancels = new Counter({
      name: `${PREFIX}cancels_total`,
      help: 'Cancels that won (the call was stopped, nothing sent), by source.',
      labelNames: ['source'],
      registers,
    });
    this.queueRefusals = new Counter({
      name: `${PREFIX}queue_refusals_total`,
      help: 'Calls refused at once because the admission queue was full ("server busy").',
      registers,
    });
    this.queueWait = new Histogram({
      name: `${PREFIX}queue_wait_seconds`,
      help: 'Time from a call being handed to the pool to its start on a worker thread.',
      buckets: BUCKETS,
      registers,
    });
    this.runTime = new Histogram({
      name: `${PREFIX}run_seconds`,
      help: 'Time on a worker thread, from start to the settled outcome.',
      buckets: BUCKETS,
      registers,
    });
    this.cancelToStopped = new Histogram({
      name: `${PREFIX}cancel_to_stopped_seconds`,
      help: 'From a cancel (or deadline) winning over a running call to its worker having stopped (checkpoint, or hard stop and replacement).',
      buckets: BUCKETS,
      registers,
    });
    this.cancelToSlotReused = new Histogram({
      name: `${PREFIX}cancel_to_slot_reused_seconds`,
      help: 'From a cancel winning over a running call to the start of the next call that was waiting for a thread.',
      buckets: BUCKETS,
      registers,
    });

    this.checkpointGap = new Histogram({
      name: `${PREFIX}checkpoint_gap_seconds`,
      help: "Each call's longest time without a cancellation check (a cancel arriving then waits that long), by tool, as its worker measured it.",
      labelNames: ['tool'],
      buckets: BUCKETS,
      registers,
    });

    const read = (pick: (s: Snapshot) => number | undefined) =>
      async function (this: Gauge | Counter) {
        const value = pick(await snapshotOnce());
        this.reset();
        if (value === undefined) return;
        if (this instanceof Gauge) this.set(value);
        else this.inc(value);
      };
    // One snapshot serves every collector of a scrape.
    const snapshotOnce = () => {
      this.snapshot ??= Promise.resolve(sources()).finally(() => setImmediate(() => (this.snapshot = undefined)));
      return this.snapshot;
    };
    const gauge = (name: string, help: string, pick: (s: Snapshot) => number | undefined) =>
      new Gauge({ name: PREFIX + name, help, registers, collect: read(pick) });
    const counter = (name: string, help: string, pick: (s: Snapshot) => number | undefined) =>
      new Counter({ name: PREFIX + name, help, registers, collect: read(pick) });
    gauge('running', 'Calls on worker threads now (not stopped).', (s) => s.running);
    gauge('queued', 'Calls waiting for a worker thread.', (s) => s.queued);
    gauge('threads', 'Worker threads alive, standby included.', (s) => s.threads);
    gauge('sessions', 'Live MCP sessions (stdio: 1).', (s) => s.sessions);
    gauge('worker_hosts', 'Worker hosts alive on the queue (front end with --redis).', (s) => s.workerHosts);
    counter(
      'hard_stops_total',
      'Stopped calls whose worker ignored its checkpoints past the grace period and was terminated and replaced.',
      (s) => s.hardStops,
    );
    counter(
      'children_started_total',
      'Child processes the tools started (ctx.spawn and node:child_process alike).',
      (s) => s.childrenStarted,
    );
    counter(
      'children_killed_total',
      'Child process groups ended by a stop of their call, by its end, or by ctx.spawn bounds.',
      (s) => s.childrenKilled,
    );
    gauge('children_alive', 'Child process groups of tools with a live member now.', (s) => s.childrenAlive);
    counter(
      'tasks_evicted_total',
      'Finished tasks removed before their ttl to keep held results within --max-finished-task-bytes (oldest finished first).',
      (s) => s.tasksEvicted,
    );
    counter(
      'responses_dropped_total',
      'Responses produced for a cancelled call and never sent.',
      (s) => s.responsesDropped,
    );
    const tasks = new Gauge({
      name: `${PREFIX}tasks`,
      help: 'Tasks held, by status (working, finished: kept for their ttl).',
      labelNames: ['status'],
      registers,
      async collect() {
        const s = await snapshotOnce();
        this.reset();
        if (s.tasksWorking !== undefined) this.set({ status: 'working' }, s.tasksWorking);
        if (s.tasksFinished !== undefined) this.set({ status: 'finished' }, s.tasksFinished);
      },
    });
    void tasks;
    new Counter({
      name: `${PREFIX}cancels_ignored_total`,
      help: 'Cancels that changed nothing: late (the call had already completed) or unknown (no such call in flight).',
      labelNames: ['reason'],
      registers,
      async collect() {
        const s = await snapshotOnce();
        this.reset();
        if (s.lateCancelsIgnored !== undefined) this.inc({ reason: 'late' }, s.lateCancelsIgnored);
        if (s.unknownCancelsIgnored !== undefined) this.inc({ reason: 'unknown' }, s.unknownCancelsIgnored);
      },
    });
  }

  /** Counts a settled call (and a refusal by a full queue). */
  settled(tool: string, outcome: JobOutcome): void {
    this.calls.inc({ tool, outcome: outcomeLabel(outcome) });
    if (outcome.kind === 'failed' && outcome.code === 'queue_full') this.queueRefusals.inc();
  }

  /** The text exposition format, for `GET /metrics`. */
  async text(): Promise<string> {
    return this.registry.metrics();
  }

  /** The `Content-Type` of {@link Metrics.text}'s answer (Prometheus' text format). */
  get contentType(): string {
    return this.registry.contentType;
  }
}
