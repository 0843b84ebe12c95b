/**
 * Evidence by wire order, not by clocks: the one place that decides whether
 * a message for a cancelled request counts against the server.
 *
 * Right behind each cancel the probe sends a chain of marker requests (`ping`
 * in 2025-11-25, `server/discover` in 2026-07-28), each once the one before
 * it is answered. A server reads its input in order, so by the time it
 * answers the first marker it has read the cancel. A message for the
 * cancelled request that arrives after the LAST marker's answer was sent by
 * a server that had read the cancel and then answered `markers` more
 * requests: not a crossing, however slow the machine. One that arrives
 * before that may have been on its way, or decided on another thread, when
 * the cancel came in; it is counted, never held against the server.
 *
 * Over Streamable HTTP the cancel travels on its own POST: the first marker
 * goes out only once that POST was acknowledged (the server had taken the
 * notification in), and the chain of full exchanges after it also covers
 * the client reading two connections in either order.
 */
import type { Order } from './types.js';
import type { Wire } from './wire.js';

/** When each marker behind one cancel was answered. */
export interface MarkerChain {
  /** The wire stamp (wire.ts `wireStamp`) of the cancel: events compare by order, not by span. */
  readonly cancelAt: number;
  /** Arrival of the last marker's answer; undefined when some marker was never answered. */
  readonly doneAt: number | undefined;
  /** Arrival of each marker's answer, in order (shorter than asked when one went unanswered). */
  readonly answeredAt: readonly number[];
}

/** Sends `count` markers one after another, the first once `delivered` settles; resolves when the last is answered or one times out. */
export async function markerChain(
  wire: Wire,
  cancelAt: number,
  delivered: Promise<unknown>,
  count: number,
  timeoutMs: number,
): Promise<MarkerChain> {
  await delivered.catch(() => undefined);
  const answeredAt: number[] = [];
  for (let i = 0; i < count; i++) {
    const m = wire.marker();
    const a = await wire.answer(m.id, timeoutMs);
    if (!a) return { cancelAt, doneAt: undefined, answeredAt };
    answeredAt.push(a.at);
  }
  return { cancelAt, doneAt: answeredAt.length ? answeredAt[answeredAt.length - 1] : cancelAt, answeredAt };
}

/** Where a message that arrived at `at` falls relative to the cancel and its chain. */
export function orderOf(at: number, chain: MarkerChain): Order {
  if (at < chain.cancelAt) return 'before-cancel';
  if (chain.doneAt === undefined) return 'markers-unanswered';
  return at > chain.doneAt ? 'after-markers' : 'before-markers';
}

/** An error answer that says the request was cancelled: the server accepted the cancel and answered anyway (the Python SDK 1.x's `Request cancelled`). */
export function saysCancelled(msg: Record<string, unknown>): boolean {
  const error = msg.error as { code?: unknown; message?: unknown } | undefined;
  return (
    error !== undefined &&
    (error.code === -32800 || (typeof error.message === 'string' && /cancel/i.test(error.message)))
  );
}

/** The sentence the reports use to explain the method. */
export const ORDERING_NOTE = (markers: number) =>
  `Judged by wire order, not time: behind each cancel the probe sends ${markers} marker request(s) one after another (ping; server/discover in 2026-07-28). A message for the cancelled request counts against the server only if it arrived after the last marker's answer (the server had read the cancel, then answered ${markers} more request(s)), or if it is a second answer, or an error saying it was cancelled. Anything earlier may have crossed the cancel and is only counted.`;
