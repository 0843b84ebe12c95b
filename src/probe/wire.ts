/**
 * Raw wire visibility under an SDK `Client`: every message each way with its
 * time, and requests of the probe's own (ids from 1 000 001 up) whose answers
 * never reach the SDK, so that sending malformed or cancelled requests does
 * not disturb it. Answers to SDK requests and everything the server initiates
 * pass through unchanged.
 */
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { ERAS, META } from './era.js';
import type { Era } from './types.js';

export type Id = string | number;

export interface WireEvent {
  /** {@link wireStamp} when it was sent or received. */
  readonly t: number;
  readonly dir: 'in' | 'out' | 'error';
  /** The message; for `error`, the transport's complaint (e.g. a message the SDK could not parse). */
  readonly msg: Record<string, unknown>;
}

/** A response or error from the server, with its arrival time. */
export interface Answer {
  readonly at: number;
  readonly msg: Record<string, unknown>;
}

const FIRST_PROBE_ID = 1_000_001;

let lastStamp = 0;
/**
 * The wire's stamp for an event: performance.now(), made strictly increasing,
 * so comparing two stamps is comparing the order in which the probe saw the
 * events (two messages of one chunk can share a microsecond; they never share
 * a stamp). The ordering judge (ordering.ts) compares stamps, never spans.
 */
export function wireStamp(): number {
  const now = performance.now();
  lastStamp = now > lastStamp ? now : lastStamp + 1e-6;
  return lastStamp;
}

export class Wire {
  readonly log: WireEvent[] = [];
  /** Ids of every request sent (by the SDK or by us). */
  private readonly requestIds = new Set<Id>();
  private readonly answers = new Map<Id, Answer[]>();
  private readonly waiters = new Map<Id, ((a: Answer) => void)[]>();
  private readonly progressTimes = new Map<Id, number[]>();
  private nextId = FIRST_PROBE_ID;
  /**
   * How a cancel goes out. Default: `notifications/cancelled` (stdio in both
   * eras, 2025 HTTP, where it is its own POST and `delivered` settles on its
   * 202). A 2026 HTTP connection replaces it with closing the stream.
   */
  canceller: (id: Id, reason: string) => { at: number; delivered: Promise<unknown> } = (id, reason) => {
    const t = wireStamp();
    const delivered = this.transport.send({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: id, reason },
    });
    return { at: t, delivered };
  };

  /**
   * Wraps `transport`; call before `client.connect(transport)` so that
   * `initialize` is recorded too. In `era` 2026 every request of the probe's
   * own carries the per-request `_meta` that replaces `initialize`.
   */
  constructor(
    readonly transport: Transport,
    readonly era: Era = '2025',
  ) {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      this.recordOut(message);
      return send(message, options);
    };
    const start = transport.start.bind(transport);
    // The SDK sets onmessage/onerror in connect(), just before start(): wrap them then.
    transport.start = async () => {
      const sdkMessage = transport.onmessage;
      const sdkError = transport.onerror;
      transport.onmessage = (message, extra) => {
        if (this.recordIn(message)) sdkMessage?.(message, extra);
      };
      transport.onerror = (error) => {
        // The SDK's schema errors run to pages: keep the gist.
        this.log.push({
          t: wireStamp(),
          dir: 'error',
          msg: { transportError: error.message.replace(/\s+/g, ' ').slice(0, 160) },
        });
        sdkError?.(error);
      };
      return start();
    };
  }

  private recordOut(message: JSONRPCMessage): void {
    const m = message as Record<string, unknown>;
    this.log.push({ t: wireStamp(), dir: 'out', msg: m });
    if ('method' in m && 'id' in m) this.requestIds.add(m.id as Id);
  }

  /** Returns whether the SDK should see the message. */
  private recordIn(message: JSONRPCMessage): boolean {
    const m = message as Record<string, unknown>;
    const t = wireStamp();
    this.log.push({ t, dir: 'in', msg: m });
    if (m.method === 'notifications/progress') {
      const token = (m.params as { progressToken?: Id } | undefined)?.progressToken;
      if (token !== undefined) this.progressTimes.set(token, [...(this.progressTimes.get(token) ?? []), t]);
    }
    if (!('result' in m || 'error' in m)) return true;
    const id = m.id as Id;
    const answer = { at: t, msg: m };
    this.answers.set(id, [...(this.answers.get(id) ?? []), answer]);
    for (const w of this.waiters.get(id) ?? []) w(answer);
    this.waiters.delete(id);
    return typeof id === 'number' ? id < FIRST_PROBE_ID && this.answers.get(id)!.length === 1 : this.requestIds.has(id);
  }

  /** Sends a request of the probe's own; returns its id and send time. */
  request(method: string, params?: Record<string, unknown>): { id: number; sentAt: number } {
    const id = this.nextId++;
    const sentAt = wireStamp();
    const withMeta =
      this.era === '2026'
        ? { ...params, _meta: { ...this.requestMeta(), ...(params?._meta as Record<string, unknown> | undefined) } }
        : params;
    void this.transport
      .send({ jsonrpc: '2.0', id, method, ...(withMeta && { params: withMeta }) })
      .catch(() => undefined);
    return { id, sentAt };
  }

  /** The `_meta` of a 2026-07-28 request: the version, who asks, and what it can do. */
  requestMeta(): Record<string, unknown> {
    return {
      [META.protocolVersion]: ERAS[this.era].version,
      [META.clientInfo]: { name: 'mcp-cancel-pool-probe', version: '1.0.0' },
      [META.clientCapabilities]: {},
    };
  }

  /** Sends the era's marker request (`ping`, or `server/discover` in 2026). */
  marker(): { id: number; sentAt: number } {
    return this.request(ERAS[this.era].marker);
  }

  /** Takes an id for a request the caller sends by other means (a raw HTTP POST), so its answers are told apart like ours. */
  reserve(): number {
    const id = this.nextId++;
    this.requestIds.add(id);
    return id;
  }

  /** The next id {@link request} will use (to name a progress token after it). */
  peekId(): number {
    return this.nextId;
  }

  /**
   * Writes several messages in one write where the transport allows it (a
   * stdio pipe: one write of up to 4 KiB reaches the reader whole), so the
   * server reads them in one chunk. Unset for HTTP.
   */
  writeTogether: ((lines: string) => boolean) | undefined;

  /** Sends a tools/call and, in the same write, its `notifications/cancelled`; undefined when the transport cannot. */
  callAndCancelTogether(params: Record<string, unknown>, reason: string): { id: number; sentAt: number } | undefined {
    if (!this.writeTogether) return undefined;
    const id = this.nextId;
    const withMeta =
      this.era === '2026'
        ? { ...params, _meta: { ...this.requestMeta(), ...(params._meta as Record<string, unknown> | undefined) } }
        : params;
    const call = { jsonrpc: '2.0', id, method: 'tools/call', params: withMeta } as JSONRPCMessage;
    const cancel = {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: id, reason },
    } as JSONRPCMessage;
    const sentAt = wireStamp();
    if (!this.writeTogether(JSON.stringify(call) + '\n' + JSON.stringify(cancel) + '\n')) return undefined;
    this.nextId++;
    this.recordOut(call);
    this.recordOut(cancel);
    return { id, sentAt };
  }

  /** Sends anything, well-formed or not; returns the send time. */
  raw(message: Record<string, unknown>): number {
    const t = wireStamp();
    void this.transport.send(message as JSONRPCMessage).catch(() => undefined);
    return t;
  }

  /** Cancels `id` the era's and transport's way; returns the send time and when the cancel was taken in (see {@link canceller}). */
  sendCancel(id: Id, reason = 'probe: cancelled'): { at: number; delivered: Promise<unknown> } {
    return this.canceller(id, reason);
  }

  /** The first answer for `id`, or undefined after `ms`. */
  answer(id: Id, ms: number): Promise<Answer | undefined> {
    const first = this.answers.get(id)?.[0];
    if (first) return Promise.resolve(first);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.set(
          id,
          (this.waiters.get(id) ?? []).filter((w) => w !== done),
        );
        resolve(undefined);
      }, ms);
      const done = (a: Answer) => {
        clearTimeout(timer);
        resolve(a);
      };
      this.waiters.set(id, [...(this.waiters.get(id) ?? []), done]);
    });
  }

  /** Every answer received for `id`. */
  answersFor(id: Id): readonly Answer[] {
    return this.answers.get(id) ?? [];
  }

  /** Arrival times of progress notifications with this token. */
  progressFor(token: Id): readonly number[] {
    return this.progressTimes.get(token) ?? [];
  }

  /** Sends the era's marker request and returns its round trip in ms, or undefined if unanswered within `ms`. */
  async ping(ms: number): Promise<number | undefined> {
    const { id, sentAt } = this.marker();
    const a = await this.answer(id, ms);
    return a && a.at - sentAt;
  }

  /**
   * Answers nobody asked for, received since `since`: a response whose id no
   * request carried (e.g. a reply to a notification), a second answer to one
   * request, and any message the transport could not parse.
   */
  unexpectedSince(since: number): WireEvent[] {
    const seen = new Map<Id, number>();
    const out: WireEvent[] = [];
    for (const e of this.log) {
      if (e.dir === 'error') {
        if (e.t >= since) out.push(e);
        continue;
      }
      if (e.dir !== 'in' || !('result' in e.msg || 'error' in e.msg)) continue;
      const id = e.msg.id as Id;
      const n = (seen.get(id) ?? 0) + 1;
      seen.set(id, n);
      if (e.t >= since && (n > 1 || id === undefined || id === null || !this.requestIds.has(id))) out.push(e);
    }
    return out;
  }
}
