/**
 * Requests the client sends past the SDK: the tasks methods, which SDK 2.x
 * no longer speaks (2025 `tasks/*` left with its experimental layer, and a
 * 2026 `resultType: "task"` answer is an error to its `callTool`). They get
 * string ids of their own (`mcp-cancel-pool:<n>`, never one the SDK's
 * numeric counter issues), leave through the guard (so its ledger sees
 * them like any other request), and their answers, progress and task
 * status notifications are taken off the wire before the SDK, which would
 * report them as unknown.
 */
import { ProtocolError, type JSONRPCMessage, type Progress } from '@modelcontextprotocol/client';
import type { RequestId } from '../wire/registry.js';

/** The era the connection negotiated, as far as the wire cares. */
export interface WireEra {
  /** 2026-07-28 or later: every message carries the `_meta` envelope. */
  readonly modern: boolean;
  /** The per-request `_meta` envelope (modern only). */
  readonly envelope?: Readonly<Record<string, unknown>>;
}

/** Options for one request of our own. */
export interface OwnRequestOptions {
  /** Progress for it (a progress token is sent). */
  readonly onprogress?: (progress: Progress) => void;
  /** Capabilities to add to the 2026 envelope's `clientCapabilities` for this request (e.g. an extension). */
  readonly capabilities?: Readonly<Record<string, unknown>>;
}

interface Waiting {
  resolve(result: Record<string, unknown>): void;
  reject(error: Error): void;
}

const CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
const ID_PREFIX = 'mcp-cancel-pool:';
let nextId = 1;

export class OwnRequests {
  private readonly waiting = new Map<RequestId, Waiting>();
  /** Progress routes by token: they outlive the answer when a task keeps the token (2025). */
  private readonly progressRoutes = new Map<string, (progress: Progress) => void>();
  /** Receives `notifications/tasks/status` (2025), which no SDK handler knows. */
  ontaskstatus?: (params: Record<string, unknown>) => void;

  constructor(
    private readonly send: (message: JSONRPCMessage) => Promise<void>,
    private readonly era: () => WireEra,
  ) {}

  /** Sends `method` and resolves with the result, or rejects with the server's error as a `ProtocolError`. */
  request(
    method: string,
    params: Record<string, unknown>,
    options: OwnRequestOptions = {},
  ): { id: RequestId; result: Promise<Record<string, unknown>> } {
    const id = `${ID_PREFIX}${nextId++}`;
    const era = this.era();
    const envelope = era.modern ? withCapabilities(era.envelope ?? {}, options.capabilities) : {};
    const meta = {
      ...((params._meta as Record<string, unknown> | undefined) ?? {}),
      ...envelope,
      ...(options.onprogress && { progressToken: id }),
    };
    const message = {
      jsonrpc: '2.0' as const,
      id,
      method,
      params: { ...params, ...(Object.keys(meta).length > 0 && { _meta: meta }) },
    };
    const result = new Promise<Record<string, unknown>>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
    });
    if (options.onprogress) this.progressRoutes.set(id, options.onprogress);
    this.send(message).catch((error: unknown) =>
      this.fail(id, error instanceof Error ? error : new Error(String(error))),
    );
    return { id, result };
  }

  /** A response: true if it answers one of ours (then it is handled here). */
  settle(message: JSONRPCMessage): boolean {
    const id = (message as { id?: RequestId }).id;
    const waiting = id === undefined ? undefined : this.waiting.get(id);
    if (!waiting) return false;
    this.waiting.delete(id!);
    const error = (message as { error?: { code: number; message: string; data?: unknown } }).error;
    if (error) waiting.reject(new ProtocolError(error.code, error.message, error.data));
    else waiting.resolve((message as { result: Record<string, unknown> }).result);
    return true;
  }

  /** Progress: true if its token is one of ours (delivered while its route is open). */
  progress(token: unknown, params: Record<string, unknown>): boolean {
    if (typeof token !== 'string' || !token.startsWith(ID_PREFIX)) return false;
    const { progressToken: _, _meta: __, ...progress } = params;
    this.progressRoutes.get(token)?.(progress as Progress);
    return true;
  }

  /** Closes the progress route of one of our requests (its answer came and nothing keeps the token, or its task ended). */
  endProgress(id: RequestId): void {
    if (typeof id === 'string') this.progressRoutes.delete(id);
  }

  /** A notification: true if it is one the SDK does not know and we handled. */
  notification(method: string, params: Record<string, unknown> | undefined): boolean {
    if (method !== 'notifications/tasks/status' || !params) return false;
    this.ontaskstatus?.(params);
    return true;
  }

  /** The connection closed: nothing more will be answered. */
  close(): void {
    this.progressRoutes.clear();
    for (const id of [...this.waiting.keys()]) this.fail(id, new Error('Connection closed'));
  }

  private fail(id: RequestId, error: Error): void {
    const waiting = this.waiting.get(id);
    if (!waiting) return;
    this.waiting.delete(id);
    waiting.reject(error);
  }
}

function withCapabilities(
  envelope: Readonly<Record<string, unknown>>,
  extra: Readonly<Record<string, unknown>> | undefined,
): Record<string, unknown> {
  if (!extra) return { ...envelope };
  const caps = (envelope[CAPABILITIES_KEY] as Record<string, unknown> | undefined) ?? {};
  const merged: Record<string, unknown> = { ...caps };
  for (const [key, value] of Object.entries(extra)) {
    const before = merged[key];
    merged[key] = isObject(before) && isObject(value) ? { ...before, ...value } : value;
  }
  return { ...envelope, [CAPABILITIES_KEY]: merged };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
