/**
 * Newline-delimited JSON-RPC over stdin/stdout, like the SDK's stdio
 * transport, with differences that keep a peer from taking the server down:
 * an oversized or too deeply nested line is skipped and answered with an
 * error instead of closing the transport or overflowing the stack; an
 * unparseable or invalid line gets a JSON-RPC error (the SDK only reports
 * both locally), naming the request's id when it has one; nothing thrown
 * while handling a message escapes; the output is bounded (stdin is not read
 * while the client is not reading stdout); and a broken stdout (EPIPE) closes
 * the transport as the end of stdin does. stdout carries nothing else.
 */
import type { Readable, Writable } from 'node:stream';
import {
  ProtocolErrorCode as ErrorCode,
  serializeMessage,
  type JSONRPCMessage,
  type Transport,
} from '@modelcontextprotocol/server';
// The 2.x line's zod message schema (its core package; the server re-exports only the Standard Schema ones) parses a line.
import { JSONRPCMessageSchema } from '@modelcontextprotocol/core';
import { describeInvalid, isNotificationShaped, nestingDepth, requestIdOf } from '../envelope.js';
import { DEFAULTS } from '../../defaults.js';

/** Options for {@link LineTransport}. */
export interface LineTransportOptions {
  /**
   * Longest accepted message line in bytes.
   * @default 4 MiB
   */
  readonly maxMessageBytes?: number;
  /**
   * Deepest nesting of arrays and objects accepted in a message. A deeper one
   * is refused with `-32600` before anything recursive (a schema,
   * `JSON.stringify`, a structured clone to a worker) reads it.
   * @default 128
   */
  readonly maxNestingDepth?: number;
  /**
   * Bytes of responses waiting for the client to read them above which the
   * transport stops reading stdin, so no new work is admitted, until the
   * output has drained. The effective bound is at least the output stream's
   * high-water mark. Calls already running still finish and are buffered.
   * @default 1 MiB
   */
  readonly maxOutputBufferBytes?: number;
  /**
   * At the end of stdin: `close` closes the transport (the peer's way to end
   * the session); `keep-writing` only calls {@link LineTransport.oninputend}
   * and keeps sending, so answers to requests already read still go out,
   * until the owner closes the transport.
   * @default 'close'
   */
  readonly atInputEnd?: 'close' | 'keep-writing';
}

/** Newline-delimited JSON-RPC on a pair of streams (stdin and stdout by default), hardened as described above. */
export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** stdin ended and the transport stays open for output (`atInputEnd: 'keep-writing'`). */
  oninputend?: () => void;
  /** Why the transport closed, once it has (e.g. "stdin closed"). */
  closeReason: string | undefined;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private skipping = false;
  private closed = false;
  /** Output is corked until the end of this tick (see write). */
  private corked = false;
  /**
   * Ids of the peer's requests read and neither answered nor cancelled by the peer. While one is, more output is
   * likely in this turn and a write is corked with it; bounded by what the server holds in flight (a request the
   * protocol layer threw on is dropped at once).
   */
  private readonly owed = new Set<string | number>();
  /** The output is over its bound: stdin is paused until 'drain'. */
  private blocked = false;
  /** Input read but not dispatched because the output backed up meanwhile: dispatched once it drains. */
  private held: Buffer | undefined;
  /** Sends waiting for the output to drain; one shared 'drain' listener settles them all. */
  private waiting: (() => void)[] = [];
  private readonly maxBytes: number;
  private readonly maxDepth: number;
  private readonly maxOutput: number;
  private readonly keepWriting: boolean;

  constructor(
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout,
    options: LineTransportOptions = {},
  ) {
    this.maxBytes = options.maxMessageBytes ?? DEFAULTS.maxMessageBytes;
    this.maxDepth = options.maxNestingDepth ?? DEFAULTS.maxNestingDepth;
    this.maxOutput = options.maxOutputBufferBytes ?? DEFAULTS.maxOutputBufferBytes;
    this.keepWriting = options.atInputEnd === 'keep-writing';
  }

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.once('end', this.onEnd);
    this.input.on('error', this.onInputError);
    this.output.on('drain', this.onDrain);
    // Never removed: a write error after close must not become an uncaught exception either.
    this.output.on('error', this.onOutputError);
  }

  private readonly onEnd = () => {
    if (!this.keepWriting) return void this.close('stdin closed');
    this.input.off('data', this.onData);
    this.oninputend?.();
  };
  private readonly onInputError = (error: Error) => this.onerror?.(error);
  /** EPIPE (the client closed its end of stdout), ENOBUFS, ...: nothing more can reach the client. */
  private readonly onOutputError = (error: NodeJS.ErrnoException) => {
    if (this.closed) return;
    this.onerror?.(error);
    void this.close(`stdout failed: ${error.code ?? error.message}`);
  };

  private readonly onDrain = () => {
    if (!this.blocked) return;
    this.blocked = false;
    this.release();
    if (this.closed) return;
    const held = this.held;
    this.held = undefined;
    if (held) this.onData(held);
    if (!this.blocked) this.input.resume();
  };

  /** Called when a write leaves output the client has not read yet (the output budget then watches until it is read). */
  onOutputHeld?: () => void;

  /** Bytes written to the output that the client has not read yet (the output budget watches it). */
  get unreadOutput(): number {
    return this.output.writableLength;
  }

  private release(): void {
    for (const resolve of this.waiting.splice(0)) resolve();
  }

  private readonly onData = (input: Buffer) => {
    let chunk = input;
    if (this.held) {
      chunk = Buffer.concat([this.held, input]);
      this.held = undefined;
    }
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      // No request is taken in while output is backed up past the bound, not even one already read with others.
      if (this.blocked) {
        this.held = chunk.subarray(start);
        return;
      }
      const part = chunk.subarray(start, nl);
      start = nl + 1;
      if (this.skipping) {
        this.skipping = false; // the oversized line ends here
        continue;
      }
      if (this.buffered + part.length > this.maxBytes) {
        this.reject(this.buffered + part.length);
        continue;
      }
      const line = this.chunks.length ? Buffer.concat([...this.chunks, part]) : part;
      this.chunks = [];
      this.buffered = 0;
      // A CRLF line's \r is left out before decoding, not cut off after it with a regex.
      this.dispatch(
        line.toString('utf8', 0, line.length > 0 && line[line.length - 1] === 13 ? line.length - 1 : line.length),
      );
    }
    const rest = chunk.subarray(start);
    if (rest.length === 0 || this.skipping) return;
    if (this.buffered + rest.length > this.maxBytes) {
      this.reject(this.buffered + rest.length);
      this.skipping = true;
      return;
    }
    this.chunks.push(rest);
    this.buffered += rest.length;
  };

  private reject(size: number): void {
    this.chunks = [];
    this.buffered = 0;
    void this.sendError(
      ErrorCode.InvalidRequest,
      `message too large: more than ${this.maxBytes} bytes (got at least ${size})`,
    );
  }

  private dispatch(line: string): void {
    // Blank lines are skipped; a line that opens with '{' (every message) is not one, and is not trimmed to find out.
    if (line.charCodeAt(0) !== 123 && line.trim() === '') return;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (error) {
      void this.sendError(ErrorCode.ParseError, `parse error: ${(error as Error).message}`);
      return;
    }
    // JSON.parse does not recurse, but the SDK's schema and error paths do. Valid JSON of n characters nests at most n/2 deep.
    if (line.length > 2 * this.maxDepth && nestingDepth(line, this.maxDepth) > this.maxDepth) {
      this.refuse(raw, `message nested deeper than ${this.maxDepth} levels`);
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(raw);
    if (!parsed.success) {
      this.refuse(raw, `invalid JSON-RPC message: ${describeInvalid(raw)}`);
      return;
    }
    this.track(parsed.data);
    try {
      this.onmessage?.(parsed.data);
    } catch (error) {
      // Whatever the protocol layer throws for one message, the others are still served. A request it threw on is
      // never answered, so it is not owed: otherwise each such request would stay in the set for good.
      if ('method' in parsed.data && 'id' in parsed.data) this.owed.delete(parsed.data.id);
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** An invalid message: answered with its own id when it has one, with null otherwise; a notification never. */
  private refuse(raw: unknown, message: string): void {
    if (isNotificationShaped(raw)) {
      this.onerror?.(new Error(`ignored notification: ${message}`));
      return;
    }
    void this.sendError(ErrorCode.InvalidRequest, message, requestIdOf(raw));
  }

  private sendError(code: number, message: string, id: string | number | null = null): Promise<void> {
    // JSON-RPC: when the id cannot be determined, it is null.
    return this.write(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }) + '\n');
  }

  /** Keeps {@link owed}: a request adds its id, the peer's cancel of it removes it. */
  private track(message: JSONRPCMessage): void {
    if (!('method' in message)) return;
    if ('id' in message) this.owed.add(message.id);
    else if (message.method === 'notifications/cancelled')
      this.owed.delete((message.params as { requestId?: string | number } | undefined)?.requestId ?? '');
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (!('method' in message) && 'id' in message && message.id !== null && message.id !== undefined)
      this.owed.delete(message.id);
    return this.write(serializeMessage(message));
  }

  private write(text: string): Promise<void> {
    if (this.closed) return Promise.resolve();
    // Messages produced in one turn of the event loop leave in one write: calls that finish together
    // (Piscina hands back every waiting result at once) cost the pipe, and the client, one read. The answer to
    // the only request owed leaves at once: nothing else is coming, and waiting for the turn's end cost a lone
    // call 5-10 µs of its round trip (BENCHMARKS.md, thirteenth pass on issue 24).
    if (!this.corked && this.owed.size > 0) {
      this.corked = true;
      this.output.cork();
      setImmediate(() => {
        this.corked = false;
        this.output.uncork();
      });
    }
    // write() is false past the stream's small high-water mark (and always while corked); only our own,
    // larger bound stops the input. A false write() guarantees a 'drain' to resume on.
    const flushed = this.output.write(text);
    if (!flushed) this.onOutputHeld?.();
    if (flushed || this.output.writableLength < this.maxOutput) return Promise.resolve();
    if (!this.blocked) {
      this.blocked = true;
      this.input.pause();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Stops reading and writing; `reason` becomes {@link LineTransport.closeReason}. */
  async close(reason = 'closed'): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.closeReason = reason;
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    this.input.off('error', this.onInputError);
    this.output.off('drain', this.onDrain);
    this.release(); // nothing more will be written
    this.onclose?.();
  }
}
