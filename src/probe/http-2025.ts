/**
 * Streamable HTTP as 2025-11-25 has it, for the probe: the 2026 transport's
 * POSTs and response streams (http-2026.ts), plus the session: the
 * `Mcp-Session-Id` the server gives on `initialize`, sent back on every
 * request with the negotiated `MCP-Protocol-Version`; the GET stream opened
 * after `notifications/initialized`, where a server may send what is not an
 * answer to a POST (and where a cancelled call's answer would come, if
 * anywhere); DELETE to end the session. A cancel is a
 * `notifications/cancelled` on its own POST; a closed stream is not one.
 */
import { ERAS } from './era.js';
import { Http2026Transport, type Outgoing } from './http-2026.js';

export class Http2025Transport extends Http2026Transport {
  /** The session the server gave on `initialize`. */
  sessionId: string | undefined;
  /** The negotiated revision, once `initialize` was answered. */
  protocolVersion: string | undefined;
  private readonly listen = new AbortController();

  /** Sent on every later request (the SDK clients' `setProtocolVersion`). */
  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  private sessionHeaders(): Record<string, string> {
    return {
      ...(this.sessionId !== undefined && { 'mcp-session-id': this.sessionId }),
      ...(this.protocolVersion !== undefined && { 'mcp-protocol-version': this.protocolVersion }),
    };
  }

  protected override headersFor(_m: Outgoing): Record<string, string> {
    return {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...this.sessionHeaders(),
    };
  }

  protected override responded(response: Response, m: Outgoing): void {
    const sid = response.headers.get('mcp-session-id');
    if (sid) this.sessionId = sid;
    if (m.method === 'notifications/initialized' && m.id === undefined && response.ok) void this.openGetStream();
  }

  /** The standalone GET stream; a server without one answers 405, which is allowed. */
  private async openGetStream(): Promise<void> {
    let response: Response;
    try {
      response = await fetch(this.url, {
        method: 'GET',
        headers: { accept: 'text/event-stream', ...this.sessionHeaders() },
        signal: this.listen.signal,
      });
    } catch (error) {
      if (!this.listen.signal.aborted && !this.closed)
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (!response.ok || !(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
      await response.body?.cancel().catch(() => undefined);
      return;
    }
    await this.read(undefined, response, this.listen.signal);
  }

  /** Ends the session (DELETE); a server that does not allow it answers 405, which is allowed. */
  async terminateSession(): Promise<void> {
    if (this.sessionId === undefined) return;
    const response = await fetch(this.url, { method: 'DELETE', headers: this.sessionHeaders() });
    await response.body?.cancel().catch(() => undefined);
    this.sessionId = undefined;
  }

  override async close(): Promise<void> {
    this.listen.abort();
    await super.close();
  }
}

/** The 2025-11-25 revision the probe asks for in `initialize`. */
export const PROBE_2025_VERSION = ERAS['2025'].version;
