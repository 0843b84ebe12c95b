/**
 * A worker host's way out (WorkerHost.close): it stops taking jobs, lets the
 * running ones finish and answer for the drain, then stops the rest here and
 * hands them back. Never waits on Redis past its deadlines (a Redis that is
 * down included).
 */
import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Executor } from '../executor/executor.js';
import type { HostJob } from './host-job.js';
import type { JobStates } from './job-states.js';
import type { Liveness } from './liveness.js';

/** What a closing host holds. */
export interface ClosingHost {
  readonly hostId: string;
  readonly worker: Worker;
  readonly executor: Executor;
  readonly liveness: Liveness;
  readonly states: JobStates;
  readonly cmd: Redis;
  readonly sub: Redis;
  /** Its jobs running or being taken now. */
  readonly jobs: readonly HostJob[];
}

/**
 * Closes `host` after a drain of `drainMs` (0: at once); returns how many
 * running jobs were handed back. A handed-back job is stopped here, but its
 * processor never returns, so BullMQ does not complete it: its lock expires
 * and the stalled check puts it back in the queue, where another host
 * retakes it (or, with none, its front end answers it with an error after
 * its lost-host bound).
 */
export async function closeHost(host: ClosingHost, drainMs: number): Promise<number> {
  const closing = host.worker.close(false).catch(() => undefined); // takes no more jobs
  let handedBack = 0;
  // What the drain waits for is this host's jobs, not BullMQ (which waits for Redis, however long it is away).
  if (!(await within(Promise.all(host.jobs.map((j) => j.released)), drainMs))) {
    for (const job of host.jobs) {
      if (job.state.kind !== 'running') continue;
      handedBack++;
      job.state.local.tryCancel();
    }
  }
  if (!(await within(closing, 1000))) await within(host.worker.close(true).catch(() => undefined), 1000);
  await within(host.executor.close(), 5000);
  // With jobs handed back, the liveness key is left to expire (HOST_LIVENESS_TTL_MS), so their front ends
  // wait for the retake (within LOCK_DURATION_MS + STALLED_INTERVAL_MS) instead of failing them as lost.
  const leaving = handedBack > 0 ? host.liveness.pause() : host.liveness.stop();
  await within(Promise.all([leaving, host.states.hostGone(host.hostId).catch(() => undefined)]), 1000);
  host.sub.disconnect();
  host.cmd.disconnect();
  return handedBack;
}

/** True if `p` settled within `ms`. */
function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]).finally(() => clearTimeout(timer));
}
