/**
 * `ctx.spawn`: one child process of a call, run to its end and collected. The child passes through the child
 * guard like any other (its own group, its pid in the call's row), so the main thread ends it on every stop; this
 * file adds what only the worker can do: the stop's promise rejection, `timeoutMs`, the output bound, and lines.
 */
import { spawn } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import { SpawnError, type SpawnOptions, type SpawnResult } from '../src/stages/spawn.js';
import { StopError } from '../src/stages/tool.js';
import type { ChildCells } from '../src/state/child-cells.js';
import { signalGroup } from '../src/state/child-cells.js';
import { resolveDirectoryInRoot } from './tools/files.js';

/** What `ctx.spawn` needs of its call. */
export interface SpawnCall {
  readonly signal: AbortSignal;
  readonly settings: Readonly<Record<string, unknown>>;
  checkpoint(): void;
}

/** The default per-stream bound: 16 MiB. */
export const DEFAULT_MAX_OUTPUT_BYTES = 16 * 1024 * 1024;
/** How much of stderr a {@link SpawnError} carries. */
const TAIL_BYTES = 2048;

/** Runs `command` for `call`: see `StageContext.spawn`. */
export function runSpawn(
  call: SpawnCall,
  cells: ChildCells,
  defaultGraceMs: number,
  command: string,
  args: readonly string[] = [],
  options: SpawnOptions = {},
): Promise<SpawnResult<string | Buffer>> {
  call.checkpoint();
  if (typeof command !== 'string' || command === '')
    throw new TypeError('ctx.spawn: command must be a non-empty string');
  const maxBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  if (!(Number.isInteger(maxBytes) && maxBytes > 0))
    throw new RangeError(`ctx.spawn: maxOutputBytes must be a positive integer, got ${String(maxBytes)}`);
  const graceMs = options.killGraceMs ?? defaultGraceMs;
  const cwd = resolveDirectoryInRoot(options.cwd ?? '.', call.settings);
  const env: Record<string, string> = options.inheritEnv
    ? { ...(process.env as Record<string, string>), ...options.env }
    : { ...(process.env.PATH !== undefined && { PATH: process.env.PATH }), ...options.env };
  const buffers = options.encoding === 'buffer';

  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      windowsHide: true,
    });
    let failure: Error | undefined;
    // A line callback that throws fails the call's spawn, not the worker.
    const lineFailed = (error: unknown): void => stop(error instanceof Error ? error : new Error(String(error)), true);
    const out = new Collected(maxBytes, options.onStdoutLine, lineFailed);
    const err = new Collected(maxBytes, options.onStderrLine, lineFailed);
    let killTimer: NodeJS.Timeout | undefined;
    let timeout: NodeJS.Timeout | undefined;

    /** Ends the child's group (SIGTERM, SIGKILL after the grace); the promise settles with `why` once it closed. */
    const stop = (why: Error, byWorker: boolean): void => {
      if (failure) return;
      failure = why;
      const pid = child.pid;
      if (pid === undefined) return;
      // Windows has no process groups: the direct child is all that can be reached.
      const kill = (signal: NodeJS.Signals) =>
        process.platform === 'win32' ? child.kill(signal) : signalGroup(pid, signal);
      // The call's stop: the main thread signals the group right after the CAS that stopped the call, and counts
      // it; a SIGTERM from here too would race it to the group and leave the kill counted by neither.
      if (byWorker || process.platform === 'win32') kill('SIGTERM');
      if (byWorker) cells.countWorkerKill();
      killTimer = setTimeout(() => kill('SIGKILL'), graceMs);
      killTimer.unref();
    };
    const onAbort = (): void => stop(new StopError(), false);
    call.signal.addEventListener('abort', onAbort, { once: true });
    if (options.timeoutMs !== undefined && options.timeoutMs > 0)
      timeout = setTimeout(
        () =>
          stop(
            new SpawnError(
              `'${command}' ran past its timeoutMs (${options.timeoutMs} ms)`,
              'timeout',
              command,
              null,
              null,
              err.tail(),
            ),
            true,
          ),
        options.timeoutMs,
      );
    const overflow = (stream: string) =>
      stop(
        new SpawnError(
          `'${command}' wrote more than maxOutputBytes (${maxBytes} bytes) on ${stream}`,
          'output',
          command,
          null,
          null,
          err.tail(),
        ),
        true,
      );
    out.attach(child.stdout!, () => overflow('stdout'));
    err.attach(child.stderr!, () => overflow('stderr'));
    if (options.input !== undefined && child.stdin) {
      child.stdin.on('error', () => {}); // a child that exits without reading its input (EPIPE) is not an error here
      child.stdin.end(options.input);
    }

    const done = (): void => {
      clearTimeout(timeout);
      call.signal.removeEventListener('abort', onAbort);
    };
    child.once('error', (error) => {
      done();
      clearTimeout(killTimer);
      // A stop already decided what this is; otherwise the program never started.
      reject(
        failure ?? new SpawnError(`'${command}' could not start: ${error.message}`, 'start', command, null, null, ''),
      );
    });
    child.once('close', (code, signal) => {
      done();
      clearTimeout(killTimer);
      if (failure) return reject(failure);
      const result = {
        code,
        signal,
        stdout: buffers ? out.bytes() : out.bytes().toString('utf8'),
        stderr: buffers ? err.bytes() : err.bytes().toString('utf8'),
      };
      if (code === 0) return resolve(result);
      const how = signal !== null ? `was ended by ${signal}` : `exited with code ${String(code)}`;
      const tail = err.tail();
      reject(
        new SpawnError(
          `'${command}' ${how}${tail ? `: ${tail.trim().split('\n').at(-1)}` : ''}`,
          signal !== null ? 'signal' : 'exit',
          command,
          code,
          signal,
          tail,
        ),
      );
    });
  });
}

/** One stream of a child: its bytes up to the bound, and its lines as they arrive. */
class Collected {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private decoder: StringDecoder | undefined;
  private partial = '';

  constructor(
    private readonly max: number,
    private readonly onLine: ((line: string) => void) | undefined,
    private readonly onLineError: (error: unknown) => void,
  ) {
    if (onLine) this.decoder = new StringDecoder('utf8');
  }

  attach(stream: Readable, onOverflow: () => void): void {
    stream.on('data', (chunk: Buffer) => {
      if (this.size + chunk.length > this.max) {
        this.keep(chunk.subarray(0, this.max - this.size));
        stream.destroy();
        onOverflow();
        return;
      }
      this.keep(chunk);
    });
    stream.on('end', () => {
      if (this.partial !== '') this.line(this.partial);
      this.partial = '';
    });
  }

  private keep(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (!this.decoder) return;
    // Lines end at \n or \r (a progress meter redraws its line with \r).
    const parts = (this.partial + this.decoder.write(chunk)).split(/\r\n|\n|\r/);
    this.partial = parts.pop()!;
    for (const line of parts) this.line(line);
  }

  private line(line: string): void {
    try {
      this.onLine?.(line);
    } catch (error) {
      this.onLineError(error);
    }
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks, this.size);
  }

  /** The last bytes, as text. */
  tail(): string {
    const all = this.bytes();
    return all.subarray(Math.max(0, all.length - TAIL_BYTES)).toString('utf8');
  }
}
