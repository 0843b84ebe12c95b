/**
 * When a Streamable HTTP POST's response stream may end. The SDK ends it once
 * every request the POST carried has a response; a cancelled request never
 * gets one, so without this the stream would stay open for good, and the
 * SDK would keep that request's correlation entries until the session closes.
 * A POST may carry a batch: it ends only once its other requests are
 * answered, or their responses would be lost with it.
 */
import type { NodeSessionTransport as StreamableHTTPServerTransport } from './node-adapter.js';

import type { RequestId } from '../../wire/registry.js';

/** JSON-RPC code of the never-sent release response (1.x's ErrorCode.RequestTimeout). */
const REQUEST_TIMEOUT = -32001;

interface Post {
  /** Requests still owed a response. */
  readonly pending: Set<RequestId>;
  /** Requests whose cancellation won: they get no response, ever. */
  readonly cancelled: RequestId[];
}

/** The response streams of one session's pending POSTs. */
export class ResponseStreams {
  private readonly postOf = new Map<RequestId, Post>();

  constructor(private readonly transport: StreamableHTTPServerTransport) {}

  /**
   * A POST carrying these requests arrived. Call the returned function when
   * its HTTP response has closed, however that happened (the transport may
   * have refused the POST, or the client gone away).
   */
  opened(ids: readonly RequestId[]): () => void {
    const post: Post = { pending: new Set(ids), cancelled: [] };
    for (const id of ids) this.postOf.set(id, post);
    return () => {
      for (const id of post.pending) if (this.postOf.get(id) === post) this.postOf.delete(id);
    };
  }

  /** A response for `id` went to its stream. */
  answered(id: RequestId): void {
    this.settle(id, false);
  }

  /** The handler of `id` ended after its cancellation won: nothing will be sent for it. */
  cancelled(id: RequestId): void {
    this.settle(id, true);
  }

  private settle(id: RequestId, cancelled: boolean): void {
    const post = this.postOf.get(id);
    if (post) {
      this.postOf.delete(id);
      post.pending.delete(id);
      if (cancelled) post.cancelled.push(id);
    }
    const done = post ? post.pending.size === 0 && post.cancelled.length > 0 : cancelled;
    if (!done) return;
    // Everything else in the POST was answered, and the SDK waits for the cancelled ones: end the stream ourselves.
    this.transport.closeSSEStream(id);
    for (const c of post?.cancelled ?? [id]) this.release(c);
  }

  /**
   * Frees the SDK's correlation entries of a cancelled request. The only
   * public way is to hand the transport a response for it: with its stream
   * closed (above) and no event store, the transport writes it nowhere,
   * drops every entry of that stream and throws "No connection established".
   */
  private release(id: RequestId): void {
    this.transport
      .send({ jsonrpc: '2.0', id, error: { code: REQUEST_TIMEOUT, message: 'cancelled; never sent' } })
      .catch(() => undefined);
  }
}
