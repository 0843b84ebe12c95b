/**
 * Typed calls of the per-job Lua scripts (see lua.ts) on one ioredis
 * connection. Calls on one connection run in order, so a host's progress
 * reports always reach the front end before its outcome.
 */
import type { Redis } from 'ioredis';
import { RemoteKeys } from './keys.js';
import { CANCEL, CREATE, LOST, ORPHAN, PROBE, REPORT, RESPOND, TAKE } from './lua.js';

const SCRIPTS = {
  mcpCreate: [2, CREATE],
  mcpTake: [2, TAKE],
  mcpRespond: [1, RESPOND],
  mcpReport: [1, REPORT],
  mcpCancel: [1, CANCEL],
  mcpOrphan: [2, ORPHAN],
  mcpProbe: [1, PROBE],
  mcpLost: [2, LOST],
} as const;

type ScriptName = keyof typeof SCRIPTS;
type Call = (...args: (string | number)[]) => Promise<unknown>;

/** What {@link JobStates.take} found. */
export type TakeResult = 'running' | 'retaken' | 'orphan' | 'gone' | 'cancelled' | 'responding' | 'failed';
/** What {@link JobStates.cancel} found (the state before; only 'queued' and 'running' mean the cancel won). */
export type RemoteCancelResult = 'queued' | 'running' | 'responding' | 'cancelled' | 'failed' | 'unknown';
/** What {@link JobStates.probe} found. */
export type ProbeResult = { state: 'running' | 'hostless'; host: string } | { state: 'responding'; message: string } | { state: 'gone' | 'queued' | 'cancelled' | 'failed' };

/** A job hash left without an explicit delete (e.g. its front end died) expires after this. */
export const JOB_STATE_TTL_MS = 24 * 3600_000;

export class JobStates {
  readonly keys: RemoteKeys;
  constructor(
    private readonly redis: Redis,
    queue: string,
  ) {
    this.keys = new RemoteKeys(queue);
    for (const [name, [numberOfKeys, lua]] of Object.entries(SCRIPTS)) {
      if (!(name in redis)) redis.defineCommand(name, { numberOfKeys, lua });
    }
  }

  private call(name: ScriptName, ...args: (string | number)[]): Promise<unknown> {
    return (this.redis as unknown as Record<ScriptName, Call>)[name](...args);
  }

  /** A new job, queued, owned by a front end. */
  async create(jobId: string, frontId: string): Promise<void> {
    await this.call('mcpCreate', this.keys.job(jobId), this.keys.front(frontId), frontId, JOB_STATE_TTL_MS);
  }

  /** queued → running for this host (or a takeover after a stalled host). */
  take(jobId: string, frontId: string, hostId: string, token: string): Promise<TakeResult> {
    return this.call('mcpTake', this.keys.job(jobId), this.keys.front(frontId), hostId, token, this.keys.cancelChannel, jobId) as Promise<TakeResult>;
  }

  /** running → responding for the token's holder, publishing `message` to the front end in the same step. */
  async respond(jobId: string, frontId: string, token: string, message: string): Promise<boolean> {
    return (await this.call('mcpRespond', this.keys.job(jobId), token, this.keys.frontChannel(frontId), message)) === 1;
  }

  /** Publishes a report to the front end only while the token's holder runs the job. */
  async report(jobId: string, frontId: string, token: string, message: string): Promise<boolean> {
    return (await this.call('mcpReport', this.keys.job(jobId), token, this.keys.frontChannel(frontId), message)) === 1;
  }

  /** queued|running → cancelled; a running job's host hears of it on the cancel channel. */
  cancel(jobId: string): Promise<RemoteCancelResult> {
    return this.call('mcpCancel', this.keys.job(jobId), this.keys.cancelChannel, jobId) as Promise<RemoteCancelResult>;
  }

  /** running → cancelled if the job's front end is gone. */
  async cancelIfOrphan(jobId: string, frontId: string, token: string): Promise<boolean> {
    return (await this.call('mcpOrphan', this.keys.job(jobId), this.keys.front(frontId), token)) === 1;
  }

  /** Reads a job's state for the front end's sweep. */
  async probe(jobId: string): Promise<ProbeResult> {
    const [state, detail] = (await this.call('mcpProbe', this.keys.job(jobId), this.keys.host(''))) as [string, string];
    if (state === 'running' || state === 'hostless') return { state, host: detail };
    if (state === 'responding') return { state, message: detail };
    return { state: state as 'gone' };
  }

  /** running → failed if the host that holds it is gone. */
  async failIfLost(jobId: string, hostId: string): Promise<boolean> {
    return (await this.call('mcpLost', this.keys.job(jobId), this.keys.host(hostId))) === 1;
  }

  /** Forgets a finished job. */
  async remove(jobId: string): Promise<void> {
    await this.redis.del(this.keys.job(jobId));
  }
}
