/**
 * The stages API: how a tool is written. A tool is an ordered list of stages;
 * each stage's output is the next stage's input. The worker runtime checks the
 * job's state word before every stage, and a long stage checks inside its own
 * loops with `ctx.checkpoint()`.
 */
import type { z } from 'zod';
import type { CallToolResult, ToolAnnotations, ToolExecution } from '@modelcontextprotocol/server';
import type { LoggingLevel } from './log-levels.js';
import type { SpawnOptions, SpawnResult } from './spawn.js';
import { McpCancelPoolError, ToolModuleError } from '../errors.js';

export type { LoggingLevel };

/** What a stage can do besides computing: notice cancellation, report progress, log, ask the client. */
export interface StageContext {
  /** Fires as soon as the job is cancelled or hits its deadline; pass it to timers, fetch, streams. */
  readonly signal: AbortSignal;
  /**
   * Throws a {@link StopError} if the job was stopped. One atomic load: call it
   * freely inside hot loops.
   */
  checkpoint(): void;
  /** True once the job was stopped (cancelled or timed out). Reading it counts as a cancellation check. */
  readonly stopped: boolean;
  /**
   * A cancellation check for WebAssembly: returns 1 once the job was stopped,
   * else 0 (one `Atomics.load` of the job's state word). Pass it to a module
   * as an import (`{ env: { stopped: ctx.wasmCheckpoint } }`) and have its
   * loops return early when it answers 1; then throw a {@link StopError} (or
   * call `ctx.checkpoint()`) in JavaScript. A call counts as a check for the
   * checkpoint-gap measurement. A module that never calls it is stopped by
   * the hard stop, as JavaScript is. See docs/tools.md "What stops, and how fast".
   */
  readonly wasmCheckpoint: () => number;
  /**
   * Reports progress. It reaches the client as `notifications/progress` only
   * if the request asked for it with a progress token; otherwise it costs nothing.
   */
  progress(progress: number, total?: number, message?: string): void;
  /**
   * Sends a log message to the client as `notifications/message`, on the
   * call's own response stream, with `logger` set to the tool's name and
   * `data` = `message`, or `{ message, data }` when `data` is given. Messages
   * below the level the client set with `logging/setLevel` cost nothing.
   * Throttled per call: a burst of 50, then one per progress interval;
   * `error` and above have a budget of their own. Nothing is sent once the
   * call was cancelled. `data` must be plain JSON data.
   */
  log(level: LoggingLevel, message: string, data?: unknown): void;
  /**
   * Sends a request to the connected client (sampling, elicitation, roots)
   * and awaits its answer. Only tools declared with `usesClient: true` have a
   * channel for it. The request is cancelled towards the client if the job stops.
   */
  requestClient(method: ClientRequestMethod, params: Record<string, unknown>): Promise<Record<string, unknown>>;
  /**
   * Starts a program for this call and resolves with its exit code, signal and output once it exits with 0 (else a
   * `SpawnError`). It runs in its own process group: when the call stops, the group gets SIGTERM at once and
   * SIGKILL after `killGraceMs`, and the promise rejects with {@link StopError}. Children a stage starts with
   * `node:child_process` directly are part of the call too (docs/tools.md "What stops, and how fast").
   */
  spawn(
    command: string,
    args?: readonly string[],
    options?: SpawnOptions & { readonly encoding?: 'utf8' },
  ): Promise<SpawnResult>;
  /** {@link StageContext.spawn} with `encoding: 'buffer'`: stdout and stderr as bytes. */
  spawn(
    command: string,
    args: readonly string[] | undefined,
    options: SpawnOptions & { readonly encoding: 'buffer' },
  ): Promise<SpawnResult<Buffer>>;
  /** Server-wide settings for tools (e.g. `root`, the directory file tools may read), from {@link ExecutorOptions.toolSettings}. */
  readonly settings: Readonly<Record<string, unknown>>;
  /** The tool being run. */
  readonly tool: string;
  /** The stage now running. One `ctx` serves every stage of a call, so read it when you need it. */
  readonly stage: string;
}

/** Requests a stage may send to the client through {@link StageContext.requestClient}. */
export type ClientRequestMethod = 'sampling/createMessage' | 'elicitation/create' | 'roots/list';

/**
 * A stage as a plain function. The parameter type is the previous stage's
 * output (the first stage gets the validated arguments).
 */
export type StageFn<I = never, O = unknown> = (input: I, ctx: StageContext) => O | Promise<O>;

/** A stage with an explicit name, used in error messages. */
export interface NamedStage {
  /** Shown in errors: "stage 'parse' failed: …". */
  readonly name: string;
  /** The work. */
  readonly run: StageFn;
}

/** Either form of a stage. A plain function's own name is used as the stage name. */
export type StageLike = StageFn | NamedStage;

/** A tool: its MCP metadata, its input schema and its stages. */
export interface ToolDefinition<Input extends z.ZodObject = z.ZodObject> {
  /** The MCP tool name. */
  readonly name: string;
  /** Shown to people. */
  readonly title?: string;
  /** Shown to the model: say what it does and what it costs. */
  readonly description: string;
  /** Arguments, validated on the main thread before the job is queued. */
  readonly input: Input;
  /** Run in order inside a worker. */
  readonly stages: readonly StageLike[];
  /**
   * The shape of the result's `structuredContent`, listed in `tools/list` as
   * the tool's `outputSchema` (clients such as the SDK's validate results
   * against it). The worker checks every result that is not `isError`
   * against it: one without `structuredContent`, or one that does not match,
   * ends the call as a tool error naming the mismatch. Use `z.strictObject`
   * to refuse fields it does not name.
   */
  readonly output?: z.ZodObject;
  /** A deadline for one call; past it the job is stopped and the caller gets an error. */
  readonly timeoutMs?: number;
  /**
   * The tool's cancel budget (ms): the longest a stage of it should go
   * without a cancellation check (`ctx.checkpoint()`, a read of `ctx.stopped`,
   * `ctx.wasmCheckpoint`, a stage boundary). Every call's worst gap is
   * measured in the worker; a call over budget logs a warning (at most one
   * per tool a minute), and `mcp-cancel-pool check-tools` fails the tool.
   * @default 100
   */
  readonly cancelWithinMs?: number;
  /**
   * Arguments `mcp-cancel-pool check-tools` runs the tool with (the first
   * that parses), when its `--args` file names none for it. A few seconds of
   * work make the best measurement.
   */
  readonly examples?: readonly Record<string, unknown>[];
  /** Give stages a channel to the client (`ctx.requestClient`). */
  readonly usesClient?: boolean;
  /** MCP tool annotations. */
  readonly annotations?: ToolAnnotations;
  /**
   * How the tool may be run as an MCP task (a `tools/call` with a `task`
   * param, see docs/tasks.md "Tasks"): `forbidden` (plain calls only), `optional`
   * (either) or `required` (tasks only). Shown in `tools/list`.
   * @default { taskSupport: 'forbidden' }
   */
  readonly execution?: { readonly taskSupport?: NonNullable<ToolExecution['taskSupport']> };
  /**
   * OAuth scopes a caller's access token must carry to call this tool over
   * HTTP with `--auth-issuer` (besides `--auth-scopes`); without them the call
   * is answered HTTP 403 `insufficient_scope`, naming the scopes. Listed in
   * the server's Protected Resource Metadata. Ignored without authorization.
   */
  readonly scopes?: readonly string[];
}

/** Declares a tool; the identity function, there for type checking. */
export function defineTool<Input extends z.ZodObject>(tool: ToolDefinition<Input>): ToolDefinition<Input> {
  return tool;
}

/** {@link ToolDefinition.cancelWithinMs}'s default. */
export const DEFAULT_CANCEL_WITHIN_MS = 100;

/** Names a stage. */
export function stage<I, O>(name: string, run: StageFn<I, O>): NamedStage {
  return { name, run: run };
}

/** The name a stage reports in errors. */
export function stageName(s: StageLike, index: number): string {
  if (typeof s === 'function') return s.name || `#${index + 1}`;
  return s.name;
}

/**
 * Thrown by `ctx.checkpoint()` when the job was stopped. The runtime
 * recognises it; a stage that catches errors should rethrow it.
 */
export class StopError extends McpCancelPoolError {
  constructor() {
    super('ERR_JOB_STOPPED', 'job stopped');
    this.name = 'StopError';
  }
}

/** What a tool module exports: one tool, a list, or `{ tools: [...] }`. */
export type ToolModule = ToolDefinition | readonly ToolDefinition[] | { readonly tools: readonly ToolDefinition[] };

/** Reads the tools out of an imported module. */
export function toolsOfModule(mod: Record<string, unknown>, where: string): ToolDefinition[] {
  const candidate = (mod.default ?? mod.tools ?? mod) as unknown;
  const list = Array.isArray(candidate)
    ? candidate
    : isTool(candidate)
      ? [candidate]
      : candidate && typeof candidate === 'object' && Array.isArray((candidate as { tools?: unknown }).tools)
        ? (candidate as { tools: unknown[] }).tools
        : [];
  const tools = list.filter(isTool);
  if (tools.length === 0)
    throw new ToolModuleError(
      `${where} exports no tools (expected a default export of defineTool(...) or an array of them)`,
    );
  return tools;
}

function isTool(value: unknown): value is ToolDefinition {
  if (!value || typeof value !== 'object') return false;
  const t = value as Partial<ToolDefinition>;
  return typeof t.name === 'string' && Array.isArray(t.stages) && t.input !== undefined;
}

/** Turns what the last stage returned into an MCP tool result. */
export function toCallToolResult(value: unknown): CallToolResult {
  if (typeof value === 'string') return { content: [{ type: 'text', text: value }] };
  if (value && typeof value === 'object' && Array.isArray((value as CallToolResult).content))
    return value as CallToolResult;
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) ?? 'null' }] };
}
