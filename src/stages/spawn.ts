/**
 * `ctx.spawn`: a child process that is part of its call. Its types and its error live here; the worker runtime
 * runs it (workers/spawn.ts).
 */
import { McpCancelPoolError } from '../errors.js';

/** Options of {@link StageContext.spawn}. */
export interface SpawnOptions {
  /** Working directory, resolved against `settings.root` (else the server's working directory); refused outside it. */
  readonly cwd?: string;
  /** Environment of the child: only these variables and `PATH`, unless {@link inheritEnv}. */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Give the child the server's whole environment (with {@link env} on top). Off by default: secrets in the
   * server's environment do not reach a tool's programs unless asked for.
   * @default false
   */
  readonly inheritEnv?: boolean;
  /** Written to the child's stdin, which is then closed. Without it stdin is empty (`/dev/null`). */
  readonly input?: string | Uint8Array;
  /**
   * Bytes kept per stream (stdout, stderr). Past it the child's group is stopped and the promise rejects with a
   * {@link SpawnError} naming the bound.
   * @default 16777216 (16 MiB)
   */
  readonly maxOutputBytes?: number;
  /**
   * After SIGTERM to the child's group (the call stopped, {@link timeoutMs}, {@link maxOutputBytes}), how long
   * before SIGKILL. The main thread kills a stopped call's groups at the executor's grace at the latest.
   * @default the executor's `graceMs`
   */
  readonly killGraceMs?: number;
  /** Each line of stdout as it arrives (lines end at `\n` or `\r`, as progress meters redraw). */
  readonly onStdoutLine?: (line: string) => void;
  /** Each line of stderr as it arrives (lines end at `\n` or `\r`). */
  readonly onStderrLine?: (line: string) => void;
  /** Stops the child past this many ms: SIGTERM, then SIGKILL after {@link killGraceMs}; rejects with {@link SpawnError}. */
  readonly timeoutMs?: number;
  /** `'buffer'`: stdout and stderr as bytes. @default 'utf8' */
  readonly encoding?: 'utf8' | 'buffer';
}

/** How a child ended: its exit code (or the signal that ended it) and what it wrote. */
export interface SpawnResult<Out extends string | Buffer = string> {
  /** The exit code; `null` when a signal ended it. */
  readonly code: number | null;
  /** The signal that ended it, or `null`. */
  readonly signal: NodeJS.Signals | null;
  /** Everything it wrote on stdout (text, or bytes with `encoding: 'buffer'`). */
  readonly stdout: Out;
  /** Everything it wrote on stderr. */
  readonly stderr: Out;
}

/**
 * Why a {@link SpawnError} was raised: `exit` (a non-zero code), `signal` (a signal ended it), `timeout`
 * ({@link SpawnOptions.timeoutMs}), `output` ({@link SpawnOptions.maxOutputBytes}), `start` (it could not start).
 */
export type SpawnFailure = 'exit' | 'signal' | 'timeout' | 'output' | 'start';

/**
 * A child of `ctx.spawn` that did not exit with 0: a non-zero exit, a signal, its `timeoutMs`, its
 * `maxOutputBytes`, or a program that could not start. Whether that is a tool error is the tool's choice: catch it,
 * or let it fail the stage.
 */
export class SpawnError extends McpCancelPoolError {
  /** Made by the runtime; a tool catches it, it does not make one. */
  constructor(
    message: string,
    /** What happened. */
    readonly reason: SpawnFailure,
    /** The command as given. */
    readonly command: string,
    /** The exit code, or `null`. */
    readonly exitCode: number | null,
    /** The signal that ended the child, or `null`. */
    readonly signal: NodeJS.Signals | null,
    /** The last 2 KiB of its stderr, as text. */
    readonly stderrTail: string,
  ) {
    super('ERR_SPAWN', message);
  }
}
