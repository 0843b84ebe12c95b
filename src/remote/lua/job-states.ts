/**
 * Typed calls of the per-job Lua scripts (see job-lua.ts) on one ioredis
 * connection. Calls on one connection run in order, so a host's progress
 * reports always reach the front end before its outcome.
 */
import type { Redis } from 'ioredis';
import { RemoteKeys } from '../keys.js';
import { ADOPT, ASK, REPLY, STRANDED, WITHDRAW } from './ask-lua.js';
import {
  CANCEL,
  CHECK,
  CREATE,
  HOST_BEAT,
  JOBLESS,
  LIVE_HOSTS,
  LOST,
  NO_HOST,
  PROBE,
  REFUSE,
  REPORT,
  RESPOND,
  RETIRE,
  TAKE,
} from './job-lua.js';
import { defineScripts, type ScriptCaller } from './scripts.js';
import { JobStatus, type JobStatusName } from './call-states.js';

const SCRIPTS = {
  mcpCreate: [2, CREATE],
  mcpTake: [1, TAKE],
  mcpRespond: [1, RESPOND],
  mcpReport: [1, REPORT],
  mcpCancel: [1, CANCEL],
  mcpRetire: [1, RETIRE],
  mcpNoHost: [1, NO_HOST],
  mcpRefuse: [1, REFUSE],
  mcpCheck: [1, CHECK],
  mcpHostBeat: [1, HOST_BEAT],
  mcpLiveHosts: [1, LIVE_HOSTS],
  mcpProbe: [2, PROBE],
  mcpLost: [2, LOST],
  mcpJobless: [2, JOBLESS],
  mcpReply: [1, REPLY],
  mcpAdopt: [1, ADOPT],
  mcpStranded: [2, STRANDED],
  mcpAsk: [1, ASK],
  mcpWithdraw: [1, WITHDRAW],
} as const;

/** What {@link JobStates.take} found. */
export type TakeResult = Exclude<JobStatusName, 'queued'> | 'retaken' | 'orphan' | 'gone';
/** What {@link JobStates.requestCancel} found (the state before; only 'queued' and 'running' mean the cancel won). */
export type RemoteCancelResult =
  | { readonly found: Exclude<JobStatusName, 'running' | 'responding'> | 'unknown' }
  /** The cancel won while this host ran it: it will say when the work stopped. */
  | { readonly found: 'running'; readonly host: string }
  /** Completion won first: its outcome message, for the front end to deliver. */
  | { readonly found: 'responding'; readonly message: string };
/** What {@link JobStates.check} found for a host's running job. */
export type CheckResult = Exclude<JobStatusName, 'queued' | 'refused'> | 'orphan' | 'retaken' | 'gone';
/** What {@link JobStates.probe} found. */
export type ProbeResult =
  | {
      state: 'running' | 'hostless';
      host: string;
      /** The host's open asks of the client (ids), if any. */ asks?: readonly string[];
    }
  | {
      state: 'responding';
      message: string;
      /** The host that took the job ('' if none did) and whether it lives: the outcome may not verify. */ host: string;
      hostAlive: boolean;
    }
  | { state: Exclude<JobStatusName, 'running' | 'responding'> | 'gone' | 'jobless' };

/** A job hash left without an explicit delete (e.g. its front end died) expires after this. */
export const JOB_STATE_TTL_MS = 24 * 3600_000;

/** The job-state operations a front end's {@link RemoteCall} uses (a fake stands in for it in the unit tests). */
export type FrontJobStates = Pick<
  JobStates,
  | 'create'
  | 'requestCancel'
  | 'probe'
  | 'failIfLost'
  | 'failIfNoHost'
  | 'failIfJobless'
  | 'retire'
  | 'owner'
  | 'openAsks'
>;

export class JobStates {
  readonly keys: RemoteKeys;
  private readonly call: ScriptCaller<typeof SCRIPTS>;
  constructor(
    private readonly redis: Redis,
    queue: string,
  ) {
    this.keys = new RemoteKeys(queue);
    this.call = defineScripts(redis, SCRIPTS);
  }

  /** A new job, queued, owned by a front end; a task's job names its task (see CREATE in job-lua.ts). */
  async create(jobId: string, frontId: string, taskId?: string): Promise<void> {
    await this.call(
      'mcpCreate',
      this.keys.job(jobId),
      this.keys.front(frontId),
      frontId,
      JOB_STATE_TTL_MS,
      taskId === undefined ? '' : this.keys.task(taskId),
    );
  }

  /*
   * take, respond, report and check are told the front end the job's data
   * names; Redis knows which one owns the job now (a 2026 retry may have moved
   * it to another front end, ask-lua.ts), and that one wins.
   */

  /** queued → running for this host (or a takeover after a stalled host); the owning front end is told. */
  take(jobId: string, frontId: string, hostId: string, token: string): Promise<TakeResult> {
    return this.call(
      'mcpTake',
      this.keys.job(jobId),
      hostId,
      token,
      this.keys.cancelChannel,
      jobId,
      this.keys.front(''),
      this.keys.frontChannel(''),
      frontId,
    ) as Promise<TakeResult>;
  }

  /** running → responding for the token's holder, publishing `message` to the owning front end in the same step. */
  async respond(jobId: string, frontId: string, token: string, message: string): Promise<boolean> {
    return (
      (await this.call('mcpRespond', this.keys.job(jobId), token, this.keys.frontChannel(''), message, frontId)) === 1
    );
  }

  /** Publishes a report to the owning front end only while the token's holder runs the job. */
  async report(jobId: string, frontId: string, token: string, message: string): Promise<boolean> {
    return (
      (await this.call('mcpReport', this.keys.job(jobId), token, this.keys.frontChannel(''), message, frontId)) === 1
    );
  }

  /** The front end's side of the race: queued|running → cancelled; a running job's host hears of it on the cancel channel. */
  async requestCancel(jobId: string): Promise<RemoteCancelResult> {
    const [found, message] = (await this.call('mcpCancel', this.keys.job(jobId), this.keys.cancelChannel, jobId)) as [
      string,
      string,
    ];
    if (found === JobStatus.responding) return { found, message };
    if (found === JobStatus.running) return { found, host: message };
    return { found: found as 'queued' };
  }

  /** The front end is done with the call: a queued or running job is cancelled, and the state deleted. */
  async retire(jobId: string): Promise<void> {
    await this.call('mcpRetire', this.keys.job(jobId), this.keys.cancelChannel, jobId);
  }

  /** queued → refused: a host's check of the job's data against the cluster key failed. */
  async refuse(jobId: string): Promise<boolean> {
    return (await this.call('mcpRefuse', this.keys.job(jobId))) === 1;
  }

  /** queued → failed, when no host has been alive for too long. */
  async failIfNoHost(jobId: string): Promise<boolean> {
    return (await this.call('mcpNoHost', this.keys.job(jobId))) === 1;
  }

  /** A host's re-read of a job it runs (also cancels it if its front end is gone). */
  check(jobId: string, frontId: string, token: string): Promise<CheckResult> {
    return this.call('mcpCheck', this.keys.job(jobId), token, this.keys.front(''), frontId) as Promise<CheckResult>;
  }

  /** A host says it is alive for `ttlMs` more (Redis's clock). */
  async hostBeat(hostId: string, ttlMs: number): Promise<void> {
    await this.call('mcpHostBeat', this.keys.hosts, hostId, ttlMs);
  }

  /** A host leaves cleanly. */
  async hostGone(hostId: string): Promise<void> {
    await this.redis.zrem(this.keys.hosts, hostId);
  }

  /** Whether a host's liveness key is there now. */
  async hostAlive(hostId: string): Promise<boolean> {
    return (await this.redis.exists(this.keys.host(hostId))) === 1;
  }

  /** How many hosts are alive now. */
  async liveHosts(): Promise<number> {
    return Number(await this.call('mcpLiveHosts', this.keys.hosts));
  }

  /** Reads a job's state for the front end's sweep. */
  async probe(jobId: string): Promise<ProbeResult> {
    const [state, detail, more] = (await this.call(
      'mcpProbe',
      this.keys.job(jobId),
      this.keys.bullJob(jobId),
      this.keys.host(''),
    )) as [string, string, string[] | undefined];
    if (state === JobStatus.running || state === 'hostless')
      return { state, host: detail, ...(more && more.length > 0 && { asks: more }) };
    if (state === JobStatus.responding) {
      const [host, alive] = (more ?? []) as unknown as [string?, number?];
      return { state, message: detail, host: host ?? '', hostAlive: alive === 1 };
    }
    return { state: state as 'gone' };
  }

  /** queued|running → failed if BullMQ's job is gone (a write lost in a failover). */
  async failIfJobless(jobId: string): Promise<boolean> {
    return (await this.call('mcpJobless', this.keys.job(jobId), this.keys.bullJob(jobId))) === 1;
  }

  /** running → failed if the host that holds it is gone. */
  async failIfLost(jobId: string, hostId: string): Promise<boolean> {
    return (await this.call('mcpLost', this.keys.job(jobId), this.keys.host(hostId))) === 1;
  }

  /** A host's ask of the client: kept in the job's hash and published to the owning front end, only while the token's holder runs the job (ASK in ask-lua.ts). */
  async ask(jobId: string, frontId: string, token: string, ask: string, message: string): Promise<boolean> {
    return (
      (await this.call('mcpAsk', this.keys.job(jobId), token, this.keys.frontChannel(''), message, frontId, ask)) === 1
    );
  }

  /** A host withdraws its ask: gone from the job's hash, and the withdrawal published while it holds the job. */
  async withdrawAsk(jobId: string, frontId: string, token: string, ask: string, message: string): Promise<boolean> {
    return (
      (await this.call(
        'mcpWithdraw',
        this.keys.job(jobId),
        token,
        this.keys.frontChannel(''),
        message,
        frontId,
        ask,
      )) === 1
    );
  }

  /** A host got its reply: the ask is no longer open. */
  async dropAsk(jobId: string, ask: string): Promise<void> {
    await this.redis.hdel(this.keys.job(jobId), `q:${ask}`);
  }

  /** The asks kept for these ids (null where none is): a front end's recovery of ask messages it missed. */
  async openAsks(jobId: string, asks: readonly string[]): Promise<(string | null)[]> {
    return this.redis.hmget(this.keys.job(jobId), ...asks.map((a) => `q:${a}`));
  }

  /** The owning front end's reply to a host's ask (ask-lua.ts): kept in the job's hash and published; false if the job no longer runs for it. */
  async reply(jobId: string, frontId: string, ask: string, message: string): Promise<boolean> {
    return (await this.call('mcpReply', this.keys.job(jobId), ask, frontId, this.keys.replyChannel, message)) === 1;
  }

  /** The replies kept for these asks of a job (null where none came yet): a host's check for a reply message it missed. */
  async replies(jobId: string, asks: readonly string[]): Promise<(string | null)[]> {
    return this.redis.hmget(this.keys.job(jobId), ...asks.map((a) => `r:${a}`));
  }

  /** Of a task's job's open asks, those no front end can show: its owner died before keeping them (STRANDED in ask-lua.ts). */
  async stranded(jobId: string, taskId: string, asks: readonly string[]): Promise<string[]> {
    return (await this.call(
      'mcpStranded',
      this.keys.job(jobId),
      this.keys.taskInputs(taskId),
      this.keys.front(''),
      ...asks,
    )) as string[];
  }

  /** The front end that owns the job now (undefined if its state is gone). */
  async owner(jobId: string): Promise<string | undefined> {
    return (await this.redis.hget(this.keys.job(jobId), 'f')) ?? undefined;
  }

  /** Records a parked 2026 call for `ttlMs`, so any front end of the queue may adopt it (parking.ts). */
  async park(wait: string, jobId: string, data: string, ttlMs: number): Promise<void> {
    const key = this.keys.park(wait);
    await this.redis.multi().hset(key, 'j', jobId, 'd', data).pexpire(key, ttlMs).exec();
  }

  /** A parked call's signed record, read without adopting it (undefined once adopted, expired or unparked). */
  async parked(wait: string): Promise<string | undefined> {
    return (await this.redis.hget(this.keys.park(wait), 'd')) ?? undefined;
  }

  /** The one adoption of a parked call by `frontId` (ADOPT in ask-lua.ts). */
  async adopt(
    wait: string,
    frontId: string,
  ): Promise<{ found: 'adopted'; data: string; jobId: string } | { found: 'used' | 'gone' }> {
    const [found, data, jobId] = (await this.call(
      'mcpAdopt',
      this.keys.park(wait),
      this.keys.job(''),
      frontId,
      this.keys.frontChannel(''),
      this.keys.cancelChannel,
    )) as [string, string, string];
    return found === 'adopted' ? { found, data, jobId } : { found: found as 'used' };
  }

  /** The parking front end's expiry of a parked call: true if it won (no front end adopted it first). */
  async unpark(wait: string): Promise<boolean> {
    return (await this.redis.del(this.keys.park(wait))) === 1;
  }
}
