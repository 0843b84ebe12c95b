/** What crosses between the main thread and a pool worker. */
import type { MessagePort } from 'node:worker_threads';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { SlotRef } from '../state/job-state.js';
import type { ClientRequestMethod } from '../stages/tool.js';

/** Given once to every worker, replacements included (Piscina `workerData`). */
export interface WorkerInit {
  /** The {@link StateSlab} memory. */
  readonly stateBuffer: SharedArrayBuffer;
  /** File URLs of tool modules to import. */
  readonly toolModules: readonly string[];
  /** Settings every stage sees as `ctx.settings`. */
  readonly settings: Readonly<Record<string, unknown>>;
}

/** One job as sent to a worker. */
export interface WorkerTask {
  readonly tool: string;
  readonly args: unknown;
  readonly slot: SlotRef;
  /** Present when progress is wanted or the tool talks to the client. */
  readonly port?: MessagePort;
  /** Whether `ctx.progress` should post anything. */
  readonly wantsProgress: boolean;
}

/** How a job ended, as the worker reports it. */
export type WorkerOutcome =
  /** Completion won the race; the result is owed to the caller. */
  | { readonly kind: 'result'; readonly result: CallToolResult }
  /** A stage failed and completion won the race, so the error is owed. */
  | { readonly kind: 'error'; readonly stage: string; readonly message: string }
  /** The job was stopped (cancel or deadline won); nothing it produced counts. */
  | { readonly kind: 'stopped'; readonly stage: string };

/** Worker → main over the task's port. */
export type WorkerMessage =
  | { readonly type: 'progress'; readonly progress: number; readonly total?: number; readonly message?: string }
  | { readonly type: 'request'; readonly rid: number; readonly method: ClientRequestMethod; readonly params: Record<string, unknown> };

/** Main → worker over the task's port. */
export type MainMessage =
  | { readonly type: 'response'; readonly rid: number; readonly result: Record<string, unknown> }
  | { readonly type: 'error'; readonly rid: number; readonly message: string };
