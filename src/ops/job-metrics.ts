/**
 * Feeds {@link Metrics} from the local executors' job events: queue wait, run
 * time, cancel → stopped, cancel → slot reused, and (where no front-end seam
 * counts them, i.e. on a worker host) calls by tool and outcome and cancels.
 */
import type { JobOutcome } from '../backend/backend.js';
import { JOB_EVENTS, type JobEvent } from '../executor/events.js';
import type { Metrics } from './metrics.js';
import type { CancelSource } from '../state/cancel-source.js';

/** What one job's events leave behind until it settles. */
interface Times {
  tool: string;
  startedAt: number;
  runningAt?: number;
  stoppedAt?: number;
}

/** Options for {@link subscribeJobMetrics}. */
export interface JobMetricsOptions {
  /** Tool names used as labels; any other name counts as `(unknown)`, so clients cannot grow the label set. */
  readonly tools: ReadonlySet<string>;
  /** Count calls by tool and outcome here (a local pool, front end or worker host). */
  readonly countCalls: boolean;
  /** Count cancels here (a worker host: every cancel was relayed); a front end counts them by source at its backend seam. */
  readonly countCancels: boolean;
}

/** Subscribes; call the returned function to stop. */
export function subscribeJobMetrics(metrics: Metrics, options: JobMetricsOptions): () => void {
  const jobs = new WeakMap<object, Times>();
  /**
   * Stop times of running calls whose cancel won, oldest first. The next call
   * to start that was already waiting at that moment reused the slot; one
   * that came later found it idle, which says nothing about the hand-off.
   */
  const freed: number[] = [];
  const seconds = (from: number, to: number) => (to - from) / 1000;

  const onEvent = (message: unknown) => {
    const event = message as JobEvent;
    const now = performance.now();
    switch (event.type) {
      case 'start':
        jobs.set(event.job, { tool: options.tools.has(event.tool) ? event.tool : '(unknown)', startedAt: now });
        return;
      case 'running': {
        const t = jobs.get(event.job);
        if (!t) return;
        t.runningAt = now;
        metrics.queueWait.observe(seconds(t.startedAt, now));
        const stoppedAt = freed.shift();
        if (stoppedAt !== undefined && t.startedAt <= stoppedAt)
          metrics.cancelToSlotReused.observe(seconds(stoppedAt, now));
        return;
      }
      case 'stopped': {
        const t = jobs.get(event.job);
        if (!t) return;
        t.stoppedAt = now;
        freed.push(now);
        if (freed.length > 1024) freed.shift(); // bounded: with nothing waiting, stops pile up unpaired
        return;
      }
      case 'settled': {
        const t = jobs.get(event.job);
        if (!t) return;
        jobs.delete(event.job);
        if (t.runningAt !== undefined) metrics.runTime.observe(seconds(t.runningAt, now));
        if (t.stoppedAt !== undefined) metrics.cancelToStopped.observe(seconds(t.stoppedAt, now));
        if (event.checkpointGap) metrics.checkpointGap.observe({ tool: t.tool }, event.checkpointGap.ms / 1000);
        if (options.countCalls) metrics.settled(t.tool, event.outcome);
        if (options.countCancels) countCancel(metrics, event.outcome, event.source);
      }
    }
  };
  JOB_EVENTS.subscribe(onEvent);
  return () => JOB_EVENTS.unsubscribe(onEvent);
}

function countCancel(metrics: Metrics, outcome: JobOutcome, source: CancelSource | undefined): void {
  // On a host a cancel is relayed from a front end (which counts its first source), or the host's own look at the
  // job's lease, its deadline or its closing: the source the job's cancel was asked with, as its span says.
  if (outcome.kind === 'cancelled') metrics.cancels.inc({ source: source ?? 'front_end' });
  else if (outcome.kind === 'timedOut') metrics.cancels.inc({ source: 'deadline' });
}
