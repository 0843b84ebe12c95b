/**
 * Streamable HTTP as 2026-07-28 has it, for the probe: every message its own
 * POST with the request metadata headers, each answered by one JSON object or
 * an SSE stream scoped to that request; no session, no GET stream. The
 * cancel of a request is closing its response stream ({@link abort}).
 */
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { ERAS } from './era.js';

export type Id = string | number;

/** What a message looks like to the transport. */
export type Outgoing = { id?: Id; method?: string; params?: { name?: unknown; uri?: unknown; taskId?: unknown } };

export class Http2026Transport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  private readonly streams = new Map<Id, AbortController>();
  protected closed = false;

  constructor(protected readonly url: URL) {}

  async start(): Promise<void> {}

  /** The headers of the POST carrying `m`. */
  protected headersFor(m: Outgoing): Record<string, string> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': ERAS['2026'].version,
    };
    if (m.method !== undefined) headers['mcp-method'] = m.method;
    // Mcp-Name mirrors params.name (tools, prompts), params.uri (resources) or, for the tasks extension, params.taskId.
    const name = m.params?.name ?? m.params?.uri ?? m.params?.taskId;
    if (typeof name === 'string' && /^[\x20-\x7e]*$/.test(name)) headers['mcp-name'] = name;
    return headers;
  }

  /** A response came in (its headers, before its body is read). */
  protected responded(_response: Response, _m: Outgoing): void {}

  /** Posts `message`; resolves once the server's HTTP status is in (202 for a notification), the response itself is read on. */
  async send(message: JSONRPCMessage): Promise<void> {
    const m = message as Outgoing;
    const headers = this.headersFor(m);
    const abort = new AbortController();
    const isRequest = m.method !== undefined && m.id !== undefined;
    if (isRequest) this.streams.set(m.id!, abort);
    let response: Response;
    try {
      response = await fetch(this.url, {
        method: 'POST',
        headers,
        body: JSON.stringify(message),
        signal: abort.signal,
      });
    } catch (error) {
      if (isRequest) this.streams.delete(m.id!);
      if (!abort.signal.aborted) this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    this.responded(response, m);
    if (!isRequest) {
      await response.body?.cancel().catch(() => undefined);
      return;
    }
    void this.read(m.id, response, abort.signal).finally(() => this.streams.delete(m.id!));
  }

  protected async read(id: Id | undefined, response: Response, signal: AbortSignal): Promise<void> {
    try {
      const type = response.headers.get('content-type') ?? '';
      if (type.includes('text/event-stream') && response.body) {
        const events = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
        for await (const event of events) {
          if (event.data) this.deliver(event.data);
        }
      } else {
        const text = await response.text();
        if (response.ok || id === undefined || answers(text, id)) {
          if (text.trim()) this.deliver(text);
        } else {
          // A refusal not addressed to this request (a 2025 server's "no valid session", id null): its answer all the same.
          this.onmessage?.({
            jsonrpc: '2.0',
            id,
            error: {
              code: -32000,
              message: `HTTP ${response.status}${text.trim() ? `: ${text.trim().replace(/\s+/g, ' ').slice(0, 160)}` : ' with no body'}`,
            },
          });
        }
      }
    } catch (error) {
      if (!signal.aborted && !this.closed) this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
  }

  protected deliver(text: string): void {
    try {
      this.onmessage?.(JSON.parse(text) as JSONRPCMessage);
    } catch (error) {
      this.onerror?.(
        new Error(
          `unparsable message: ${text.slice(0, 120)} (${error instanceof Error ? error.message : String(error)})`,
        ),
      );
    }
  }

  /** Closes the response stream of request `id`: in 2026-07-28 that is its cancellation. False when it has none open. */
  abort(id: Id): boolean {
    const stream = this.streams.get(id);
    if (!stream) return false;
    stream.abort();
    this.streams.delete(id);
    return true;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const s of this.streams.values()) s.abort();
    this.streams.clear();
    this.onclose?.();
  }
}

/** Whether `text` is a JSON-RPC answer to request `id`. */
function answers(text: string, id: Id): boolean {
  try {
    const m = JSON.parse(text) as { id?: unknown };
    return m.id === id;
  } catch {
    return false;
  }
}
