/**
 * One 2026-07-28 call of a tool that may ask the client (`usesClient`). The
 * revision has no server-to-client requests: when the job's stage calls
 * `ctx.requestClient`, the job stays where it awaits, on its worker thread,
 * and the request being served is answered `input_required`; the client's
 * retry (a new request id) brings the answer and the call runs on, in that
 * request. A call is served in rounds:
 *
 * ```
 * round(exchange) → the job ends: its outcome    (answered in this exchange)
 *                 → the job asks: input_required (parked until a retry, or cancelled after --input-wait-ms)
 * answer(inputResponses) → round(next exchange) …
 * ```
 *
 * Progress and logs go to the exchange of the current round; while parked,
 * none is open and they are dropped.
 */
import type { CallToolRequest } from '@modelcontextprotocol/server';
import type { CallHandle, ClientRequestHandler, JobOutcome, StartOptions } from '../backend/backend.js';
import type { ClientRequestMethod } from '../stages/tool.js';
import type { LoggingLevel } from '../stages/log-levels.js';
import { startOptions, type HandlerExtra } from '../server/call-options.js';
import { abortableAsk, type AnswerAsk } from './abortable-ask.js';
import type { ParkedCall, ParkedQuestion } from './shared-parking.js';

/** The request a round is served in. */
export interface Exchange {
  readonly request: CallToolRequest;
  readonly ctx: HandlerExtra;
  /** The request's `clientCapabilities` (2026: per request). */
  readonly capabilities: Readonly<Record<string, unknown>>;
  readonly logLevel: () => LoggingLevel | undefined;
  /** The lane of the call in the fair queue, when not its session's (StartOptions.turn). */
  readonly turn?: string;
}

/** One embedded request of an `input_required` answer. */
export interface InputRequest {
  readonly method: ClientRequestMethod;
  readonly params: Record<string, unknown>;
}

/** How a round ended. */
export type Round = { readonly kind: 'outcome'; readonly outcome: JobOutcome } | { readonly kind: 'input'; readonly inputRequests: Record<string, InputRequest> };

/** The capability a client must declare for each kind of request (mrtr.mdx: never ask what it did not declare). */
export const CAPABILITY: Record<ClientRequestMethod, string> = { 'elicitation/create': 'elicitation', 'sampling/createMessage': 'sampling', 'roots/list': 'roots' };

interface Ask extends InputRequest {
  readonly resolve: AnswerAsk;
}

export class InputCall {
  readonly outcome: Promise<JobOutcome>;
  /** The job's questions not answered yet, by the key they carry in `inputRequests`. */
  private readonly asks = new Map<string, Ask>();
  private nextKey = 1;
  /** Where reports go now; undefined while parked. */
  private reports: StartOptions | undefined;
  /** The capabilities of the last request served (an ask may arrive while parked). */
  private capabilities: Readonly<Record<string, unknown>>;
  /** A capability the job asked for and the request had not declared (SEP-2575: the request is then refused with -32021). */
  missingCapability: string | undefined;
  /** Wakes the round waiting for the job's next ask. */
  private woken: (() => void) | undefined;

  /** Keys of a call adopted from another front end, for its open asks as they are handed over (in order). */
  private readonly presetKeys: string[];

  /** `adopted`: the call was parked by another front end and `call` takes over its job (shared-parking.ts). */
  constructor(
    readonly call: CallHandle,
    first: Exchange,
    adopted?: ParkedCall,
  ) {
    this.presetKeys = adopted?.questions.map((q) => q.key) ?? [];
    if (adopted) this.nextKey = adopted.nextKey;
    this.capabilities = first.capabilities;
    this.toolName = first.request.params.name;
    this.enter(first);
    const base = startOptions(first.request, first.ctx, first.logLevel, true);
    this.outcome = call.start({
      tool: base.tool,
      args: base.args,
      // Every level leaves the worker; each round's request filters by its own level.
      liveLogs: true,
      onProgress: (report) => this.reports?.onProgress?.(report),
      onLog: (entry) => this.reports?.onLog?.(entry),
      onClientRequest: this.ask,
      ...(first.turn !== undefined && { turn: first.turn }),
    });
  }

  /** The tool this call runs. */
  get tool(): string {
    return this.toolName;
  }
  private toolName: string;

  /** Serves one round in `exchange`: until the job ends, or asks the client while it still runs. */
  async round(exchange: Exchange): Promise<Round> {
    this.enter(exchange);
    for (;;) {
      const asked = await Promise.race([this.outcome.then(() => false), this.nextAsk()]);
      if (!asked) return this.ended();
      // Questions asked in one turn (a stage's Promise.all) go out in one answer.
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.call.state !== 'running' && this.call.state !== 'queued') return this.ended(); // being stopped: its asks are rejected
      if (this.asks.size === 0) continue;
      this.reports = undefined;
      return { kind: 'input', inputRequests: Object.fromEntries([...this.asks].map(([key, a]) => [key, { method: a.method, params: a.params }])) };
    }
  }

  /** The open questions, in the order they were asked (what another front end needs to resume the call). */
  questions(): ParkedQuestion[] {
    return [...this.asks].map(([key, a]) => ({ key, method: a.method, params: a.params }));
  }

  /** The number the call's next key gets. */
  get keyCounter(): number {
    return this.nextKey;
  }

  /** The keys the parked call waits for, with the method each must answer. */
  pending(): ReadonlyMap<string, ClientRequestMethod> {
    return new Map([...this.asks].map(([key, a]) => [key, a.method]));
  }

  /** Hands the retry's answers to the job's waiting asks; a key it does not wait for is ignored (mrtr.mdx: ignore what is not needed). */
  answer(responses: Readonly<Record<string, Record<string, unknown>>>): void {
    for (const [key, ask] of [...this.asks]) {
      const response = responses[key];
      if (response === undefined) continue; // asked again in the next round
      this.asks.delete(key);
      ask.resolve(response);
    }
  }

  private async ended(): Promise<Round> {
    return { kind: 'outcome', outcome: await this.outcome };
  }

  private enter(exchange: Exchange): void {
    this.toolName = exchange.request.params.name;
    this.capabilities = exchange.capabilities;
    this.reports = startOptions(exchange.request, exchange.ctx, exchange.logLevel, true);
  }

  private nextAsk(): Promise<true> {
    if (this.asks.size > 0) return Promise.resolve(true);
    return new Promise((resolve) => (this.woken = () => resolve(true)));
  }

  /** The worker's `ctx.requestClient`, in this era: a question for the next `input_required`. */
  private readonly ask: ClientRequestHandler = (method, params, signal) => {
    const capability = CAPABILITY[method];
    if (this.capabilities[capability] === undefined) {
      this.missingCapability ??= capability;
      return Promise.reject(new Error(`${method}: the client did not declare the '${capability}' capability in this request's clientCapabilities`));
    }
    const key = this.presetKeys.shift() ?? `${capability}-${this.nextKey++}`;
    const asked = abortableAsk(signal, `${method} not needed: the call stopped`, (resolve) => this.asks.set(key, { method, params, resolve }), () => this.asks.delete(key));
    if (this.asks.has(key)) {
      const wake = this.woken;
      this.woken = undefined;
      wake?.();
    }
    return asked;
  };
}
