/**
 * A question a job asked the client, kept until it is answered or the job
 * stops: the one shape behind a 2026 MRTR ask (input-call.ts), a task's
 * `input_required` ask (tasks/task-inputs.ts) and a worker host's relayed ask
 * (remote/host-asks.ts). The job's stop signal rejects it, so a stopped job
 * never waits on the client.
 */

/** Settles one kept question with the client's answer. */
export type AnswerAsk = (result: Record<string, unknown>) => void;
/** Settles one kept question with an error (the client refused, or it could not be reached). */
export type RefuseAsk = (error: Error) => void;

/**
 * The promise of one question: `keep` stores its answerer (and refuser) where
 * an answer can find it; an abort of `signal` (already aborted included) calls `forget`,
 * and, if that found the question still kept (true), rejects with
 * `notNeeded`. Once answered, the signal no longer matters.
 */
export function abortableAsk(signal: AbortSignal, notNeeded: string, keep: (answer: AnswerAsk, refuse: RefuseAsk) => void, forget: () => boolean): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const stop = () => {
      if (forget()) reject(new Error(notNeeded));
    };
    keep(
      (result) => {
        signal.removeEventListener('abort', stop);
        resolve(result);
      },
      (error) => {
        signal.removeEventListener('abort', stop);
        reject(error);
      },
    );
    if (signal.aborted) return stop();
    signal.addEventListener('abort', stop, { once: true });
  });
}
