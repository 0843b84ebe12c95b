/**
 * Parked 2026 calls in Redis ({@link SharedParking}): a parked call's record
 * (its job, caller, tool and open questions with the host's ask ids) is kept
 * under its wait id for --input-wait-ms, signed with the cluster key; a
 * retry on any front end of the queue adopts it with ADOPT (ask-lua.ts),
 * which moves the job's ownership to that front end in the same step.
 */
import type { CallHandle } from '../../backend/backend.js';
import type { AdoptRefusal, ParkedCall, ParkedQuestion, SharedParking } from '../../asks/shared-parking.js';
import type { ClientRequestMethod } from '../../stages/tool.js';
import { parseSigned, signed, type ClusterKey } from '../config/cluster-key.js';
import type { JobStates } from '../lua/job-states.js';
import type { RemoteCall } from './remote-call.js';

/** The record: `j` job, `c` caller, `t` tool, `q` questions (each with the host's ask id `a`), `n` next key, `tp` the first round's traceparent (tracing only). */
interface Record_ {
  readonly j: string;
  readonly c: string;
  readonly t: string;
  readonly q: readonly (ParkedQuestion & { readonly a: string })[];
  readonly n: number;
  readonly tp?: string;
}

/** How long a parked call's record outlives its wait. */
const PARK_GRACE_MS = 60_000;

export class RedisParking implements SharedParking {
  readonly scope: string;

  constructor(
    private readonly states: JobStates,
    private readonly frontId: string,
    private readonly key: ClusterKey | undefined,
    /** This front end's remote call behind a handle (the server holds wrapped handles). */
    private readonly callOf: (handle: CallHandle) => RemoteCall | undefined,
  ) {
    this.scope = `queue:${states.keys.queue}`;
  }

  async share(wait: string, handle: CallHandle, parked: ParkedCall, ttlMs: number): Promise<boolean> {
    const call = this.callOf(handle);
    const jobId = call?.jobId;
    if (!call || jobId === undefined) return false;
    // The call's questions and its host's open asks are the same asks, made in the same order.
    const open = call.openAsks();
    if (open.length !== parked.questions.length || open.some((o, i) => o.method !== parked.questions[i]!.method))
      return false;
    const record: Record_ = {
      j: jobId,
      c: parked.caller,
      t: parked.tool,
      q: parked.questions.map((q, i) => ({ ...q, a: open[i]!.a })),
      n: parked.nextKey,
      ...(parked.firstRound !== undefined && { tp: parked.firstRound }),
    };
    // Kept past the wait: the parking front end's expiry must find it to win (a late state is refused as expired anyway).
    await this.states.park(wait, jobId, JSON.stringify(signed(this.key, 'park', wait, record)), ttlMs + PARK_GRACE_MS);
    return true;
  }

  async adopt(wait: string, handle: CallHandle): Promise<ParkedCall | AdoptRefusal> {
    const got = await this.states.adopt(wait, this.frontId).catch(() => undefined);
    if (got === undefined)
      return {
        reason: 'gone',
        message: 'Redis failed while resuming the call; it may still be parked: retry the same request',
      };
    if (got.found !== 'adopted') {
      if (got.found === 'used')
        return {
          reason: 'used',
          message:
            'requestState was already used by an earlier retry (each one resumes its call once), or its call was cancelled after --input-wait-ms',
        };
      return {
        reason: 'gone',
        message: 'the parked call no longer runs (it was cancelled, or its front end or worker host is gone)',
      };
    }
    const record = parse(got.data, this.key, wait);
    if (!record || record.j !== got.jobId) {
      // Whoever wrote it can write Redis; the job it names is ours now, and nobody can resume it: stop it.
      void this.states.retire(got.jobId).catch(() => undefined);
      return {
        reason: 'forged',
        message: "the parked call's record in Redis does not verify against the cluster key; the call was cancelled",
      };
    }
    // The handle is gone from this front end if the retry was cancelled meanwhile (then the job, ours now, is stopped).
    const call = this.callOf(handle);
    if (call?.jobId !== record.j && !call?.adopt(record.j, record.q)) {
      if (!call) void this.states.retire(record.j).catch(() => undefined);
      return { reason: 'gone', message: 'the retry was cancelled while it resumed the call' };
    }
    return {
      caller: record.c,
      tool: record.t,
      questions: record.q.map(({ key, method, params }) => ({ key, method, params })),
      nextKey: record.n,
      ...(typeof record.tp === 'string' && { firstRound: record.tp }),
    };
  }

  async firstRoundOf(wait: string): Promise<string | undefined> {
    const data = await this.states.parked(wait);
    const record = data === undefined ? undefined : parse(data, this.key, wait);
    return typeof record?.tp === 'string' ? record.tp : undefined;
  }

  async unpark(wait: string): Promise<boolean> {
    return this.states.unpark(wait);
  }
}

function parse(text: string, key: ClusterKey | undefined, wait: string): Record_ | undefined {
  const r = parseSigned<Record_>(text, key, 'park', wait);
  if (
    !r ||
    typeof r.j !== 'string' ||
    typeof r.c !== 'string' ||
    typeof r.t !== 'string' ||
    !Array.isArray(r.q) ||
    typeof r.n !== 'number'
  )
    return undefined;
  const ok = r.q.every(
    (q: { key?: unknown; a?: unknown; method?: unknown; params?: unknown } | null) =>
      typeof q?.key === 'string' &&
      typeof q.a === 'string' &&
      typeof (q.method as ClientRequestMethod) === 'string' &&
      typeof q.params === 'object' &&
      q.params !== null,
  );
  return ok ? r : undefined;
}
