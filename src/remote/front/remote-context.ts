/** What a front end's {@link RemoteCall} needs from its backend, and nothing more (kept apart so neither imports the other). */
import type { BackendStats, FailureCode, StartOptions } from '../../backend/backend.js';
import type { ToolDefinition } from '../../stages/tool.js';
import type { InFlightEntry } from '../../wire/registry.js';
import type { ClusterKey } from '../config/cluster-key.js';
import type { FrontJobStates } from '../lua/job-states.js';
import type { FrontMessage, RemoteJobData } from '../messages.js';

/** The counters a remote call moves. */
export type RemoteCounters = Pick<
  BackendStats,
  'completed' | 'failed' | 'timedOut' | 'cancelled' | 'lateCancelsIgnored' | 'reportsReceived' | 'reportsDiscarded'
>;

/** A refusal of a new call: the code and message its failed outcome gets. */
export interface Refusal {
  readonly code: FailureCode;
  readonly message: string;
}

/** What a front end's {@link RemoteCall} needs from its backend. */
export interface RemoteContext {
  readonly frontId: string;
  /** The Redis URL without credentials, for messages. */
  readonly redisDisplay: string;
  readonly queueName: string;
  readonly states: FrontJobStates;
  readonly tools: ReadonlyMap<string, ToolDefinition>;
  readonly counters: RemoteCounters;
  /** How long queuing a call, or asking Redis to cancel it, may take before the front end decides alone. */
  readonly redisTimeoutMs: number;
  /** Signs jobs and checks what hosts send (see cluster-key.ts); undefined: Redis is trusted. */
  readonly clusterKey: ClusterKey | undefined;
  /** Why a new call cannot be queued now (Redis away, credentials refused, queue full, no host), or undefined. */
  refusal(options: StartOptions): Refusal | undefined;
  /** Puts the job on the BullMQ queue (after its state exists). */
  enqueue(jobId: string, data: RemoteJobData): Promise<void>;
  /** Takes a job off the BullMQ queue if it is still there (best effort: a host that takes it finds it cancelled). */
  dequeue(jobId: string): void;
  /** Sends the call's reply to its host's ask `a` (signed with the cluster key; dropped if the job no longer runs for this front end). */
  reply(jobId: string, a: string, reply: { readonly r: Record<string, unknown> } | { readonly e: string }): void;
  /** A job id was given to a call: route its channel messages to it. */
  submitted(jobId: string, call: { receive(message: FrontMessage): void }): void;
  /** A cancel won while the job ran on a host (`host`, if Redis said): its stop is awaited (the `stopping` gauge). */
  stopping(jobId: string, host: string | undefined): void;
  /** The call's job moved to another front end: it leaves the registry, and its Redis state is left to its new owner. */
  released(call: InFlightEntry, jobId: string): void;
  /**
   * The call settled: it leaves the registry, and once its submission has
   * settled (whatever it did), its Redis state is retired (a job still queued
   * or running is cancelled, the state deleted).
   */
  settled(call: InFlightEntry, jobId: string | undefined, submission: Promise<boolean> | undefined): void;
}
