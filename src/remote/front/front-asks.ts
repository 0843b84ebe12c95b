/**
 * A front end's side of a worker host's ask of the client (host-asks.ts):
 * the ask came on this front end's channel (`t: 'q'`) for one of its calls;
 * it is handed to the call's `StartOptions.onClientRequest` (a 2025 session's
 * server-to-client request, a 2026 call's `input_required` round, a task's
 * `input_required`), and the answer, or why there is none, goes back to the
 * host through Redis, signed with the cluster key. An ask ends here when the
 * host withdraws it (`t: 'x'`: the job stopped there) or the call stops here
 * (a cancel asked, the call settled): its signal aborts, nothing is replied.
 * An ask may come twice (its message, and the probe that finds it kept in
 * Redis after a missed message): it is asked once, and never again once
 * answered or withdrawn.
 */
import type { ClientRequestHandler } from '../../backend/backend.js';
import type { ClientRequestMethod } from '../../stages/tool.js';

/** Sends a reply to ask `a` of the job: the client's result, or an error message. */
export type SendReply = (a: string, reply: { readonly r: Record<string, unknown> } | { readonly e: string }) => void;

/** An ask being answered: the host's ask id and the question. */
export interface OpenAsk {
  readonly a: string;
  readonly method: ClientRequestMethod;
  readonly params: Record<string, unknown>;
}

export class FrontAsks {
  /** Asks being answered, by ask id, in the order they came. */
  private readonly open = new Map<
    string,
    { readonly stop: AbortController; readonly method: ClientRequestMethod; readonly params: Record<string, unknown> }
  >();
  /** Asks that ended here (answered, withdrawn, aborted), or were withdrawn before they came: never asked again. */
  private readonly done = new Set<string>();

  constructor(
    private readonly handler: ClientRequestHandler | undefined,
    private readonly send: SendReply,
  ) {}

  /** Asks being answered now (a gauge for the tests). */
  get size(): number {
    return this.open.size;
  }

  /** The asks being answered, in the order they came (a parked call's record, parking.ts). */
  list(): OpenAsk[] {
    return [...this.open].map(([a, o]) => ({ a, method: o.method, params: o.params }));
  }

  /** Whether ask `a` is open here or ended here. */
  seen(a: string): boolean {
    return this.open.has(a) || this.done.has(a);
  }

  /** The host's ask `a`: hands it to the call's handler at once (in order), and its answer to the host. */
  ask(a: string, method: ClientRequestMethod, params: Record<string, unknown>): void {
    if (this.seen(a)) return;
    const stop = new AbortController();
    this.open.set(a, { stop, method, params });
    let asked: Promise<Record<string, unknown>>;
    try {
      asked = this.handler
        ? this.handler(method, params, stop.signal, a)
        : Promise.reject(new Error(`${method}: this call has no way to reach its client`));
    } catch (error) {
      asked = Promise.reject(error);
    }
    asked.then(
      (r) => this.reply(a, { r }),
      (e: unknown) => this.reply(a, { e: e instanceof Error ? e.message : String(e) }),
    );
  }

  /** The host withdrew ask `a` (the job stopped there). */
  withdraw(a: string, why = 'the job stopped on its worker host'): void {
    this.done.add(a); // a probe that read the ask before it was withdrawn must not ask it after
    const open = this.open.get(a);
    if (!open) return;
    this.open.delete(a);
    open.stop.abort(why);
  }

  /** The call stopped here: every open ask is aborted, none is replied. */
  abortAll(why: string): void {
    for (const a of [...this.open.keys()]) this.withdraw(a, why);
  }

  private reply(a: string, reply: Parameters<SendReply>[1]): void {
    if (!this.open.delete(a)) return; // withdrawn or aborted meanwhile: the job no longer waits for it
    this.done.add(a);
    this.send(a, reply);
  }
}
