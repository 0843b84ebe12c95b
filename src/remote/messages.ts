/** What travels between a front end and a worker host: the BullMQ job's data, and the messages on the front end's channel. */
import type { JobOutcome, LogEntry, ProgressReport } from '../backend/backend.js';
import type { LoggingLevel } from '../stages/log-levels.js';
import type { ClientRequestMethod } from '../stages/tool.js';
import { jsonObject, verified, type ClusterKey } from './config/cluster-key.js';

/** The default queue name of `serve --redis` and `worker`. */
export const DEFAULT_QUEUE = 'mcp-cancel-pool';

/** A BullMQ job's data: one tools/call. */
export interface RemoteJobData {
  /** The front end that owns the call (its channel and liveness key). */
  readonly front: string;
  readonly tool: string;
  readonly args: unknown;
  readonly timeoutMs?: number;
  /** The call asked for progress (a progress token). */
  readonly progress: boolean;
  /** The call wants logs, at this level and above. */
  readonly logLevel?: LoggingLevel;
  readonly liveLogs: boolean;
  /** The call's W3C trace context (`traceparent`, `tracestate`, `baggage`) while tracing: the host's spans join its trace. */
  readonly tc?: Readonly<Record<string, string>>;
  /** With a cluster key: the MAC over the rest and the job id (see cluster-key.ts). */
  readonly m?: string;
}

/** On the front end's channel: a take, a report, an ask of the client, the outcome, or the end of a stopped job `j`. */
export type FrontMessage =
  /** A host took the job (published by the take script itself). */
  | { readonly j: string; readonly t: 'r'; readonly h: string }
  /** A 2026 retry moved the job to another front end (published by the adopt script itself; see ask-lua.ts). */
  | { readonly j: string; readonly t: 'm' }
  /** The job's work stopped on its host after a cancel won (`k`: its thread had to be terminated). */
  | { readonly j: string; readonly t: 's'; readonly k: boolean }
  | { readonly j: string; readonly t: 'p'; readonly r: ProgressReport }
  | { readonly j: string; readonly t: 'l'; readonly e: LogEntry }
  /** The job's stage asks the client (`ctx.requestClient`); `a` names the ask (random, one per ask), for the reply. */
  | {
      readonly j: string;
      readonly t: 'q';
      readonly a: string;
      readonly q: { readonly method: ClientRequestMethod; readonly params: Record<string, unknown> };
    }
  /** The ask `a` is not needed any more (the job stopped on its host, e.g. its deadline): stop asking the client. */
  | { readonly j: string; readonly t: 'x'; readonly a: string }
  /** The outcome; `h` is the host that ran it. Only sent once the job's Redis state is `responding`. */
  | { readonly j: string; readonly t: 'o'; readonly o: JobOutcome; readonly h: string };

/**
 * Parses a channel message; undefined if it is not one of ours, or, with a
 * cluster key, if a host's message does not verify. A take (`r`) is
 * published by the take script inside Redis, which holds no key: it is taken
 * unsigned, and it only moves a call from queued to running; so is a move
 * (`m`), which a front end believes only once the job's hash says so.
 */
export function parseFrontMessage(text: string, key?: ClusterKey): FrontMessage | undefined {
  const m = jsonObject(text) as (Partial<FrontMessage> & { m?: string }) | undefined;
  if (
    m === undefined ||
    typeof m.j !== 'string' ||
    !(
      m.t === 'p' ||
      m.t === 'l' ||
      m.t === 'o' ||
      m.t === 'r' ||
      m.t === 's' ||
      m.t === 'q' ||
      m.t === 'x' ||
      m.t === 'm'
    )
  )
    return undefined;
  if ((m.t === 'q' || m.t === 'x') && typeof m.a !== 'string') return undefined;
  if (m.t === 'r' || m.t === 'm') return m as FrontMessage; // from a script, unsigned; 'm' is checked against the job's owner
  return verified(key, 'message', m.j, m as FrontMessage);
}

/** A front end's reply to ask `a` of job `j`, on the hosts' reply channel: the client's result `r`, or why there is none `e`. */
export type HostReply = { readonly j: string; readonly a: string } & (
  { readonly r: Record<string, unknown> } | { readonly e: string }
);

/** Parses a reply; undefined if it is not one; `unverified` if, with a cluster key, it does not verify (forged or altered). */
export function parseHostReply(text: string, key?: ClusterKey): HostReply | 'unverified' | undefined {
  const m = jsonObject(text) as Partial<{ j: unknown; a: unknown; r: unknown; e: unknown; m: unknown }> | undefined;
  if (m === undefined || typeof m.j !== 'string' || typeof m.a !== 'string') return undefined;
  const hasResult = typeof m.r === 'object' && m.r !== null && !Array.isArray(m.r);
  if (!hasResult && typeof m.e !== 'string') return undefined;
  return verified(key, 'reply', m.j, m as HostReply) ?? 'unverified';
}

/**
 * A pub/sub listener that never throws: ioredis re-throws a listener's error
 * out of its parser, which ends the process, and anyone who can publish on
 * the channel chooses what arrives. The first failure and every thousandth
 * reach `log` (a publisher must not flood it), never the message itself.
 */
export function safeListener(
  what: string,
  log: (line: string) => void,
  handle: (channel: string, text: string) => void,
): (channel: string, text: string) => void {
  let failures = 0;
  return (channel, text) => {
    try {
      handle(channel, text);
    } catch (error) {
      if (failures++ % 1000 === 0)
        log(
          `ignored a message on the ${what} channel (${text.length} bytes): ${error instanceof Error ? error.message : String(error)}; ${failures} so far`,
        );
    }
  };
}
