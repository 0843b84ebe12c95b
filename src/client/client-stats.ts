/** The counters a {@link ClientGuard} keeps at the client's end of the wire. */
/** Counters kept at the client's end of the wire. */
export interface ClientCancelStats {
  /** Cancellations sent for our own requests that were still pending (`notifications/cancelled` or a closed stream). */
  cancelsSent: number;
  /** Cancellations not sent because the request had already been answered (or was never ours). */
  staleCancelsSuppressed: number;
  /** Cancellations of `initialize` not sent: a client must not cancel it. */
  initializeCancelsSuppressed: number;
  /** Responses that arrived after we had requested cancellation: accepted on the wire, never used. */
  lateResponsesIgnored: number;
  /** Progress notifications for requests we had cancelled, discarded. */
  lateProgressIgnored: number;
  /** Server requests (sampling, elicitation, roots) that the server cancelled while we worked on them. */
  serverCancelsApplied: number;
  /** Server cancellations naming no request of the server's that we still work on (unknown, answered, or one of our own ids). */
  serverCancelsIgnored: number;
  /** Our answers to server requests the server had cancelled: not sent. */
  responsesDropped: number;
}

/** A fresh set of zeroed counters. */
export function emptyClientStats(): ClientCancelStats {
  return {
    cancelsSent: 0,
    staleCancelsSuppressed: 0,
    initializeCancelsSuppressed: 0,
    lateResponsesIgnored: 0,
    lateProgressIgnored: 0,
    serverCancelsApplied: 0,
    serverCancelsIgnored: 0,
    responsesDropped: 0,
  };
}
