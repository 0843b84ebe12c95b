/**
 * Tags: how a caller of the SDK learns the wire id of the request the SDK
 * sends for it. The SDK may await before it sends (a 2026 retry leaves
 * later still), so the caller puts a tag in the request's `_meta`; the guard
 * strips it as the request leaves and records the id. A tag cancelled before
 * its request left, or released (its caller is done), stops it leaving.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import type { RequestId } from '../wire/registry.js';
import { cancelledLocally } from '../wire/jsonrpc.js';

/** The `_meta` key by which a caller learns the id the SDK gives its request (stripped before the request leaves). */
const TAG_KEY = 'mcp-cancel-pool/tag';

/** A caller's handle on the request the SDK will send for it; see {@link ClientGuard.tag}. */
export interface RequestTag {
  /** The `_meta` to add to the request's params. */
  readonly meta: Readonly<Record<string, string>>;
  /** The wire id, once the request left. */
  readonly id: RequestId | undefined;
  /** Cancels the request: towards the server if it left and is pending, or stops it leaving. True if a cancellation was sent. */
  sendCancel(reason?: string): boolean;
  /** The caller is done with it. */
  release(): void;
}

interface TagState {
  id?: RequestId;
  cancelled?: string | true;
}

let nextTag = 1;

/** The tags of one guard. */
export class RequestTags {
  /** Tags not yet released, by key. */
  private readonly live = new Map<string, TagState>();

  constructor(
    /** Cancels a request that left (the guard's gate); true if a cancellation was sent. */
    private readonly sendCancel: (id: RequestId, reason?: string) => boolean,
    /** Hands a message to the SDK as if it came from the server. */
    private readonly deliver: (message: JSONRPCMessage) => void,
  ) {}

  /** A tag for one request the SDK will send. */
  tag(): RequestTag {
    const key = String(nextTag++);
    const state: TagState = {};
    this.live.set(key, state);
    return {
      meta: { [TAG_KEY]: key },
      get id() {
        return state.id;
      },
      sendCancel: (reason) => {
        if (state.id !== undefined) return this.sendCancel(state.id, reason);
        state.cancelled = reason ?? true;
        return false;
      },
      release: () => this.live.delete(key),
    };
  }

  /** Strips a tag from a request and records its id; 'dropped' if the tag was cancelled before the request left, or released (its caller is done). */
  untag<M extends JSONRPCMessage & { id: RequestId }>(message: M): M | 'dropped' {
    const params = (message as { params?: Record<string, unknown> }).params;
    const meta = params?._meta as Record<string, unknown> | undefined;
    const key = meta?.[TAG_KEY];
    if (typeof key !== 'string') return message;
    const { [TAG_KEY]: _, ...rest } = meta!;
    const clean = { ...message, params: { ...params, _meta: rest } } as typeof message;
    const state = this.live.get(key);
    // A released tag's caller is gone (answered or aborted): a later request under it is a 2026 retry
    // the SDK's multi-round-trip driver would send after the abort, and must not leave either.
    if (!state || state.cancelled !== undefined) {
      // Aborted before the SDK got round to sending: nothing leaves; the SDK's wait settles here.
      const reason = state?.cancelled === true ? undefined : state?.cancelled;
      queueMicrotask(() => this.deliver(cancelledLocally(message.id, reason)));
      return 'dropped';
    }
    state.id = message.id;
    return clean;
  }
}
