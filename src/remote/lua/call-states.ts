/**
 * The remote call's states and transitions, declared once. A call across
 * hosts has two state machines that meet in Redis:
 *
 * **The job's state in Redis** (field `s` of the job's hash), one Lua script
 * per transition (job-lua.ts, ask-lua.ts, task-lua.ts, task-input-lua.ts). Redis
 * runs a script atomically, so each script is the cross-host counterpart of
 * the local state word's compare-and-swap (src/state/job-state.ts): only one
 * transition out of `queued` or `running` can succeed.
 *
 * ```
 *   queued ──take (host)──▶ running ──respond (host)──▶ responding   (the outcome is published; the front end answers)
 *     │                       │ ▲
 *     │                       │ └─retake (another host, after BullMQ's stalled-job recovery; the old token loses)
 *     │                       ├──cancel | retire | tasks/cancel | input wait expired (front end)──▶ cancelled (published to the hosts; nothing is ever sent)
 *     │                       ├──check (host: front end gone)──▶ cancelled
 *     │                       └──lost (front end: host gone, not retaken in time)──▶ failed (a tool error is sent)
 *     ├──cancel | retire | tasks/cancel | input wait expired (front end)──▶ cancelled (never reaches a host)
 *     ├──no host (front end: no live host for a while)──▶ failed (a tool error is sent)
 *     ├──refuse (host: its data does not verify against the cluster key)──▶ refused (a tool error is sent)
 *     └──take finds the front end gone──────────────────▶ cancelled
 *   queued | running ──jobless (front end: BullMQ's job is gone, a write lost in a failover)──▶ failed (a tool error is sent)
 * ```
 *
 * The scripts name these states only through {@link LUA_JOB_STATUS} (Lua
 * constants generated from {@link JobStatus}), and a unit test reads every
 * script's writes of `s` against {@link JOB_TRANSITIONS}.
 *
 * **The front end's call** ({@link FrontState}, driven by remote-call.ts):
 *
 * ```
 *   reserved ──start──▶ submitting ──added──▶ queued ──taken──▶ running ──delivered (Redis: responding)──▶ settled{outcome}
 *      │                    │                   │                  │
 *      │                    │                   └──requestCancel──▶ cancelling ◀──requestCancel──┘
 *      │                    └──requestCancel (Redis asked once the job is there)──▶ │
 *      │                                                            │ Redis: responding ──▶ settled{the host's outcome}
 *      │                                                            └ anything else (won, gone, failed, queuing failed, no answer) ──▶ settled{cancelled}
 *      │                    submitting ──submit fails or times out──▶ settled{failed}
 *      ├──requestCancel──▶ settled{cancelled}
 *      ├──adopted (a 2026 retry takes over a job parked by another front end)──▶ running
 *      └──abandoned, or refused at start (unknown tool, bad arguments, full)──▶ settled{failed}
 *   submitting | queued ──the host took it (its take message, a report, an ask)──▶ running
 *   running ──the sweep saw its host, or saw none since (hostlessSince)──▶ running
 *   submitting | queued | running ──the host's outcome (Redis: responding)──▶ settled{outcome}
 *   queued | running ──gone | jobless | host lost | no host (each a Redis CAS where it races a host)──▶ settled{failed}
 *   queued | running ──moved (a 2026 retry adopted the job on another front end)──▶ settled{cancelled, uncounted}
 * ```
 *
 * The one rule: only the host's outcome, published when it won running →
 * responding in Redis, can beat a cancel that was asked. Once a call is
 * `cancelling`, every other path ends in `settled{cancelled}`, so nothing is
 * sent by construction.
 */
import type { CallState, CancelResult, JobOutcome, StartOptions } from '../../backend/backend.js';

/** Every state of a job in Redis (field `s` of its hash). */
export const JobStatus = {
  queued: 'queued',
  running: 'running',
  responding: 'responding',
  cancelled: 'cancelled',
  failed: 'failed',
  refused: 'refused',
} as const;

/** A job state in Redis. */
export type JobStatusName = keyof typeof JobStatus;

/** One transition of a job's state in Redis, and the script that makes it. */
export interface JobTransition {
  /** The exported name of the Lua script that makes it. */
  readonly script: string;
  readonly from: readonly JobStatusName[];
  readonly to: JobStatusName;
  /** Who runs the script. */
  readonly by: 'host' | 'front';
}

/** The transitions of the diagram above, by name. */
export const JOB_TRANSITIONS = {
  create: { script: 'CREATE', from: [], to: 'queued', by: 'front' },
  take: { script: 'TAKE', from: ['queued', 'running'], to: 'running', by: 'host' },
  orphanAtTake: { script: 'TAKE', from: ['queued', 'running'], to: 'cancelled', by: 'host' },
  respond: { script: 'RESPOND', from: ['running'], to: 'responding', by: 'host' },
  cancel: { script: 'CANCEL', from: ['queued', 'running'], to: 'cancelled', by: 'front' },
  retire: { script: 'RETIRE', from: ['queued', 'running'], to: 'cancelled', by: 'front' },
  taskCancel: { script: 'TASK_CANCEL', from: ['queued', 'running'], to: 'cancelled', by: 'front' },
  inputWaitExpired: { script: 'INPUT_EXPIRE', from: ['queued', 'running'], to: 'cancelled', by: 'front' },
  orphanAtCheck: { script: 'CHECK', from: ['running'], to: 'cancelled', by: 'host' },
  lost: { script: 'LOST', from: ['running'], to: 'failed', by: 'front' },
  noHost: { script: 'NO_HOST', from: ['queued'], to: 'failed', by: 'front' },
  refuse: { script: 'REFUSE', from: ['queued'], to: 'refused', by: 'host' },
  jobless: { script: 'JOBLESS', from: ['queued', 'running'], to: 'failed', by: 'front' },
} as const satisfies Record<string, JobTransition>;

/** The Lua name of a state's constant (`queued` → `QUEUED`). */
export function luaStatusName(state: JobStatusName): string {
  return state.toUpperCase();
}

/**
 * The job states as Lua locals, generated from {@link JobStatus}: every
 * script that reads or writes `s` starts with it and names states only
 * through these constants.
 */
export const LUA_JOB_STATUS = `
local ${Object.keys(JobStatus)
  .map((s) => luaStatusName(s as JobStatusName))
  .join(', ')} = ${Object.values(JobStatus)
  .map((s) => `'${s}'`)
  .join(', ')}`;

/** A call's job once it has an id: what it runs and whether it reached Redis. */
export interface Submission {
  readonly jobId: string;
  readonly options: StartOptions;
  /** True once the job's state and BullMQ job exist in Redis; false if queuing failed. Never rejects. */
  readonly inRedis: Promise<boolean>;
}

/** Where a front end's remote call is: one field, one truth (the second diagram above). */
export type FrontState =
  | { readonly kind: 'reserved' }
  | { readonly kind: 'submitting'; readonly job: Submission }
  | { readonly kind: 'queued'; readonly job: Submission }
  | { readonly kind: 'running'; readonly job: Submission; readonly host: string; readonly hostlessSince?: number }
  | {
      readonly kind: 'cancelling';
      readonly job: Submission;
      readonly from: 'queued' | 'running';
      readonly decision: Promise<CancelResult>;
    }
  | { readonly kind: 'settled'; readonly outcome: JobOutcome };

/** A front state's name. */
export type FrontStateName = FrontState['kind'];

/**
 * The edges of the front end's drawing above: for each state, the states it may move to. `running → running` is the
 * host (or its absence) seen anew; `settled` is never left. remote-call.ts moves only through FrontCallState
 * (src/remote/front/front-state.ts), which refuses anything else.
 */
export const FRONT_EDGES: { readonly [S in FrontStateName]: readonly FrontStateName[] } = {
  reserved: ['submitting', 'running', 'settled'],
  submitting: ['queued', 'running', 'cancelling', 'settled'],
  queued: ['running', 'cancelling', 'settled'],
  running: ['running', 'cancelling', 'settled'],
  cancelling: ['settled'],
  settled: [],
};

/** What a front state means to the server ({@link CallState}: `CallHandle.state`). */
export function callStateOf(state: FrontState): CallState {
  switch (state.kind) {
    case 'reserved':
    case 'submitting':
    case 'queued':
      return 'queued';
    case 'running':
      return 'running';
    case 'cancelling':
      return 'cancelling';
    case 'settled':
      return state.outcome.kind;
  }
}

/** How a front state counts in the backend's gauges: waiting for a host, on one, or neither (a reservation has no job yet). */
export function countedAs(state: FrontState): 'queued' | 'running' | undefined {
  if (state.kind === 'reserved') return undefined;
  if (state.kind === 'cancelling') return state.from;
  const s = callStateOf(state);
  return s === 'queued' || s === 'running' ? s : undefined;
}
