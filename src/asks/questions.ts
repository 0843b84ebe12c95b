/**
 * The core of asking the client: a question a job asked, kept until it is
 * answered or the job stops. One shape behind every way a question travels:
 * a 2026 MRTR round (./input-call.ts), a 2026 task's `input_required`
 * (tasks/task-inputs.ts, tasks/shared-task-inputs.ts), a worker host's relayed
 * ask (remote/host/host-asks.ts). The job's stop signal rejects it, so a stopped
 * job never waits on the client.
 *
 * This folder's core imports nothing from the server, the transports, tasks,
 * remote or the client (test/import-graph.test.ts): those rooms hold the thin
 * parts that carry these questions over their own wire.
 */
import type { ClientRequestMethod } from '../stages/tool.js';

/** Settles one kept question with the client's answer. */
export type AnswerAsk = (result: Record<string, unknown>) => void;
/** Settles one kept question with an error (the client refused, or it could not be reached). */
export type RefuseAsk = (error: Error) => void;

/** One embedded request of an `input_required` answer (or a task's `inputRequests`). */
export interface InputRequest {
  readonly method: ClientRequestMethod;
  readonly params: Record<string, unknown>;
}

/** The capability a client must declare for each kind of request (mrtr.mdx: never ask what it did not declare). */
export const CAPABILITY: Record<ClientRequestMethod, string> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

/**
 * Why `method` may not be asked of a client that declared `capabilities`
 * (`where` names the request that declared them), or undefined if it may.
 */
export function undeclared(
  method: ClientRequestMethod,
  capabilities: Readonly<Record<string, unknown>>,
  where: string,
): Error | undefined {
  const capability = CAPABILITY[method];
  if (capabilities[capability] !== undefined) return undefined;
  return new Error(`${method}: the client did not declare the '${capability}' capability in ${where}`);
}

/**
 * The promise of one question: `keep` stores its answerer (and refuser) where
 * an answer can find it; an abort of `signal` (already aborted included) calls `forget`,
 * and, if that found the question still kept (true), rejects with
 * `notNeeded`. Once answered, the signal no longer matters.
 */
export function abortableAsk(
  signal: AbortSignal,
  notNeeded: string,
  keep: (answer: AnswerAsk, refuse: RefuseAsk) => void,
  forget: () => boolean,
): Promise<Record<string, unknown>> {
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

/** One open question as another front end needs it: its key and request. */
export interface KeyedQuestion extends InputRequest {
  readonly key: string;
}

interface Open extends InputRequest {
  readonly answer: AnswerAsk;
}

/**
 * The open questions of one job, in this process, under the keys their
 * `inputRequests` carry (`<capability>-<n>`, never reused over the job's
 * life). Each is an {@link abortableAsk}: answered by {@link answer}, or
 * gone when the job's signal aborts. `changed` hears each question kept or
 * dropped (a task's status follows them).
 */
export class OpenQuestions {
  private readonly open = new Map<string, Open>();

  constructor(
    /** The number the next key gets (a call adopted from another front end goes on from its count). */
    private nextKey = 1,
    private readonly changed: () => void = () => undefined,
  ) {}

  /** A fresh key for a question of this method. */
  newKey(method: ClientRequestMethod): string {
    return `${CAPABILITY[method]}-${this.nextKey++}`;
  }

  /** The number the next key gets. */
  get keyCounter(): number {
    return this.nextKey;
  }

  /** How many questions wait for an answer. */
  get size(): number {
    return this.open.size;
  }

  /** Whether `key` waits for an answer. */
  has(key: string): boolean {
    return this.open.has(key);
  }

  /** Keeps the job's question under `key` until answered, or until `signal` aborts (rejected with `notNeeded`). */
  ask(key: string, request: InputRequest, signal: AbortSignal, notNeeded: string): Promise<Record<string, unknown>> {
    const asked = abortableAsk(
      signal,
      notNeeded,
      (answer) => this.open.set(key, { ...request, answer }),
      () => {
        if (!this.open.delete(key)) return false;
        this.changed();
        return true;
      },
    );
    if (this.open.has(key)) this.changed();
    return asked;
  }

  /** The open questions in the order they were asked. */
  list(): KeyedQuestion[] {
    return [...this.open].map(([key, q]) => ({ key, method: q.method, params: q.params }));
  }

  /** The open questions as `inputRequests`. */
  inputRequests(): Record<string, InputRequest> {
    return Object.fromEntries([...this.open].map(([key, q]) => [key, { method: q.method, params: q.params }]));
  }

  /** The keys waiting, with the method each must answer (what a retry's answers are checked against). */
  pending(): ReadonlyMap<string, ClientRequestMethod> {
    return new Map([...this.open].map(([key, q]) => [key, q.method]));
  }

  /** Hands each answer to its waiting question; a key not waiting is ignored (mrtr.mdx: ignore what is not needed). Returns how many were answered. */
  answer(responses: Readonly<Record<string, unknown>>): number {
    let answered = 0;
    for (const [key, q] of [...this.open]) {
      const response = responses[key];
      if (response === undefined) continue; // asked again in the next round
      this.open.delete(key);
      q.answer(response as Record<string, unknown>);
      answered++;
    }
    if (answered > 0) this.changed();
    return answered;
  }
}
