/**
 * Newline-delimited JSON-RPC over stdin/stdout, like the SDK's stdio
 * transport, with two differences that keep a bad line from taking the
 * server down: an oversized line is skipped and answered with an error
 * instead of closing the transport, and an unparseable line gets a JSON-RPC
 * parse error (the SDK only reports both locally). stdout carries nothing else.
 */
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { ErrorCode, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** Options for {@link LineTransport}. */
export interface LineTransportOptions {
  /** Longest accepted message line in bytes. Default 4 MiB. */
  readonly maxMessageBytes?: number;
}

export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private skipping = false;
  private closed = false;
  /** Output is corked until the end of this tick (see write). */
  private corked = false;
  private readonly maxBytes: number;

  constructor(
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout,
    options: LineTransportOptions = {},
  ) {
    this.maxBytes = options.maxMessageBytes ?? 4 * 1024 * 1024;
  }

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.once('end', this.onEnd);
    this.input.on('error', this.onInputError);
  }

  private readonly onEnd = () => void this.close();
  private readonly onInputError = (error: Error) => this.onerror?.(error);

  private readonly onData = (chunk: Buffer) => {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
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
      this.dispatch(line.toString('utf8').replace(/\r$/, ''));
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
    void this.sendError(ErrorCode.InvalidRequest, `message too large: more than ${this.maxBytes} bytes (got at least ${size})`);
  }

  private dispatch(line: string): void {
    if (line.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch (error) {
      const parse = error instanceof SyntaxError;
      void this.sendError(parse ? ErrorCode.ParseError : ErrorCode.InvalidRequest, parse ? `parse error: ${error.message}` : 'invalid JSON-RPC message');
      return;
    }
    this.onmessage?.(message);
  }

  private sendError(code: number, message: string): Promise<void> {
    // JSON-RPC: when the id cannot be determined, it is null.
    return this.write(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }) + '\n');
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.write(serializeMessage(message));
  }

  private write(text: string): Promise<void> {
    if (this.closed) return Promise.resolve();
    // Messages produced in one turn of the event loop leave in one write: calls that finish together
    // (Piscina hands back every waiting result at once) cost the pipe, and the client, one read.
    if (!this.corked) {
      this.corked = true;
      this.output.cork();
      setImmediate(() => {
        this.corked = false;
        this.output.uncork();
      });
    }
    return new Promise((resolve) => {
      if (this.output.write(text)) resolve();
      else this.output.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    this.input.off('error', this.onInputError);
    this.onclose?.();
  }
}
