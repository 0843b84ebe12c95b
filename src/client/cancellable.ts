/**
 * One cancel-aware request through the SDK: the SDK gets neither the
 * caller's signal nor its timeout (it would send its own cancellation, and
 * cannot cancel the era's way); the request's tag tells the guard which wire
 * request is this call's, whenever the SDK sends it, and cancels that one.
 */
import { DEFAULT_REQUEST_TIMEOUT_MSEC, type Progress, type RequestOptions } from '@modelcontextprotocol/client';
import { CallAbortedError } from '../errors.js';
import type { ClientGuard, RequestTag } from './guard.js';
import type { CallOptions } from './options.js';
import { reasonText } from './reason.js';

/** The longest delay a Node timer accepts; the SDK's own timeout is pushed out to it, ours applies instead. */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * Sends through the SDK without its signal or timeout, and implements both
 * here: an abort or the timeout cancels the request once, through its tag,
 * and rejects at once with a {@link CallAbortedError}.
 */
export function cancellable<T>(
  guard: ClientGuard | undefined,
  send: (tag: RequestTag | undefined, sdkOptions: RequestOptions) => Promise<T>,
  options: CallOptions,
): Promise<T> {
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(new CallAbortedError('AbortError', signal.reason, undefined, false));
  const timeout = options.timeout ?? DEFAULT_REQUEST_TIMEOUT_MSEC;
  // The SDK may await before it sends: the tag tells the guard which request is this call's, whenever it leaves.
  const tag = guard?.tag();
  return new Promise<T>((resolve, reject) => {
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      if (Number.isFinite(timeout))
        timer = setTimeout(() => stop('TimeoutError', `timed out after ${timeout} ms`), timeout);
    };
    const settle = () => {
      done = true;
      clearTimeout(timer);
      tag?.release();
      signal?.removeEventListener('abort', onAbort); // a later abort must not reach this finished call
    };
    // Ours, not the caller's: it reaches the SDK's multi-round-trip driver (2026 input_required), whose
    // handlers see it and which sends no retry once it fired. The wire leg in flight is cancelled by the tag.
    const flow = new AbortController();
    const stop = (kind: 'AbortError' | 'TimeoutError', reason: unknown) => {
      if (done) return;
      const cancelSent = tag !== undefined && tag.sendCancel(reasonText(reason));
      const id = tag?.id;
      settle();
      flow.abort(reason);
      reject(new CallAbortedError(kind, reason, id, cancelSent));
    };
    const onAbort = () => stop('AbortError', signal?.reason);
    const onprogress = options.onprogress;
    const sdkOptions: RequestOptions = {
      timeout: MAX_TIMER_MS,
      signal: flow.signal,
      ...(onprogress && {
        onprogress: (p: Progress) => {
          if (done) return;
          if (options.resetTimeoutOnProgress) arm();
          onprogress(p);
        },
      }),
    };
    send(tag, sdkOptions).then(
      (value) => {
        if (done) return;
        settle();
        resolve(value);
      },
      (error: unknown) => {
        if (done) return;
        settle();
        reject(error);
      },
    );
    if (done) return;
    signal?.addEventListener('abort', onAbort, { once: true });
    arm();
  });
}

/** `params` with the tag's `_meta` key added. */
export function tagged<P extends { _meta?: Record<string, unknown> }>(params: P, tag: RequestTag | undefined): P {
  if (!tag) return params;
  return { ...params, _meta: { ...(params._meta ?? {}), ...tag.meta } };
}
