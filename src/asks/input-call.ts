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
import type { CallHandle, ClientRequestHandler, JobOutcome, StartOptions } from '../backend/backend.js';
import type { ClientRequestMethod } from '../stages/tool.js';
import { CAPABILITY, OpenQuestions, undeclared, type InputRequest } from './questions.js';
import type { ParkedCall, ParkedQuestion } from './shared-parking.js';
import { activeTraceparent } from '../otel/carrier.js';

/**
 * The request a round is served in, as the server hands it over: what it
 * runs and where its reports go (`StartOptions` built by the server for that
 * request), and what the client declared.
 */
export interface Exchange {
  /** The tool and arguments the request names, and its progress and log sinks. */
  readonly options: StartOptions;
  /** The request's `clientCapabilities` (2026: per request). */
  readonly capabilities: Readonly<Record<string, unknown>>;
}

/** How a round ended. */
export type Round =
  | { readonly kind: 'outcome'; readonly outcome: JobOutcome }
  | { readonly kind: 'input'; readonly inputRequests: Record<string, InputRequest> };

export class InputCall {
  readonly outcome: Promise<JobOutcome>;
  /** The job's questions not answered yet, by the key they carry in `inputRequests`. */
  private readonly asks: OpenQuestions;
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

  /**
   * The first round's server span (a W3C traceparent) while tracing is on:
   * every later round's span joins its trace (src/otel/server-span.ts), here
   * or, kept in the shared record, on another front end.
   */
  readonly firstRound: string | undefined;

  /** `adopted`: the call was parked by another front end and `call` takes over its job (shared-parking.ts). */
  constructor(
    readonly call: CallHandle,
    first: Exchange,
    adopted?: ParkedCall,
  ) {
    this.presetKeys = adopted?.questions.map((q) => q.key) ?? [];
    // Made in the first round's handler, inside its server span (adopted: the round that parked it elsewhere said which).
    this.firstRound = adopted ? adopted.firstRound : activeTraceparent();
    this.asks = new OpenQuestions(adopted?.nextKey);
    this.capabilities = first.capabilities;
    this.toolName = first.options.tool;
    this.enter(first);
    this.outcome = call.start({
      tool: first.options.tool,
      args: first.options.args,
      // Every level leaves the worker; each round's request filters by its own level.
      liveLogs: true,
      onProgress: (report) => this.reports?.onProgress?.(report),
      onLog: (entry) => this.reports?.onLog?.(entry),
      onClientRequest: this.ask,
      // The lane of the call in the fair queue, when not its session's (the server sets it in the options).
      ...(first.options.turn !== undefined && { turn: first.options.turn }),
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
      return { kind: 'input', inputRequests: this.asks.inputRequests() };
    }
  }

  /** The open questions, in the order they were asked (what another front end needs to resume the call). */
  questions(): ParkedQuestion[] {
    return this.asks.list();
  }

  /** The number the call's next key gets. */
  get keyCounter(): number {
    return this.asks.keyCounter;
  }

  /** The keys the parked call waits for, with the method each must answer. */
  pending(): ReadonlyMap<string, ClientRequestMethod> {
    return this.asks.pending();
  }

  /** Hands the retry's answers to the job's waiting asks; a key it does not wait for is ignored (mrtr.mdx: ignore what is not needed). */
  answer(responses: Readonly<Record<string, Record<string, unknown>>>): void {
    this.asks.answer(responses);
  }

  private async ended(): Promise<Round> {
    return { kind: 'outcome', outcome: await this.outcome };
  }

  private enter(exchange: Exchange): void {
    this.toolName = exchange.options.tool;
    this.capabilities = exchange.capabilities;
    this.reports = exchange.options;
  }

  private nextAsk(): Promise<true> {
    if (this.asks.size > 0) return Promise.resolve(true);
    return new Promise((resolve) => (this.woken = () => resolve(true)));
  }

  /** The worker's `ctx.requestClient`, in this era: a question for the next `input_required`. */
  private readonly ask: ClientRequestHandler = (method, params, signal) => {
    const refused = undeclared(method, this.capabilities, "this request's clientCapabilities");
    if (refused) {
      this.missingCapability ??= CAPABILITY[method];
      return Promise.reject(refused);
    }
    const key = this.presetKeys.shift() ?? this.asks.newKey(method);
    const asked = this.asks.ask(key, { method, params }, signal, `${method} not needed: the call stopped`);
    if (this.asks.has(key)) {
      const wake = this.woken;
      this.woken = undefined;
      wake?.();
    }
    return asked;
  };
}
