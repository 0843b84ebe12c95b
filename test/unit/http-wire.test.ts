/**
 * The raw HTTP load client's wire (bench/lib/http-wire.ts): the 2026 request
 * with its envelope and headers, the 2025 session request, and reading the
 * response to one id out of a JSON or SSE answer: only a result that is not
 * a tool error counts as a call.
 */
import { describe, expect, it } from 'vitest';
import {
  initializeRequest,
  legacyRequest,
  LEGACY_VERSION,
  MODERN_VERSION,
  modernRequest,
  readOutcome,
  sseMessages,
} from '../../bench/lib/http-wire.js';

describe('requests', () => {
  it('a 2026 request carries the envelope in params._meta and headers that agree with its body', () => {
    const r = modernRequest('b1', 'tools/call', { name: 'spin', arguments: { ms: 0 } });
    expect(r.headers).toEqual({
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN_VERSION,
      'mcp-method': 'tools/call',
      'mcp-name': 'spin',
    });
    const body = JSON.parse(r.body) as { id: string; params: { name: string; _meta: Record<string, unknown> } };
    expect(body.id).toBe('b1');
    expect(body.params.name).toBe('spin');
    expect(body.params._meta['io.modelcontextprotocol/protocolVersion']).toBe(MODERN_VERSION);
    expect(modernRequest('b2', 'resources/read', { uri: 'bench://stats' }).headers['mcp-name']).toBe('bench://stats');
    expect(modernRequest('b3', 'tools/list').headers).not.toHaveProperty('mcp-name');
  });

  it('a 2025 request names its session and revision; initialize has neither; a notification has no id', () => {
    const init = initializeRequest('i1');
    expect(init.headers).not.toHaveProperty('mcp-session-id');
    expect(JSON.parse(init.body)).toMatchObject({
      id: 'i1',
      method: 'initialize',
      params: { protocolVersion: LEGACY_VERSION },
    });
    const cancel = legacyRequest(undefined, 'notifications/cancelled', { requestId: 'b7' }, 'sid', '2025-06-18');
    expect(cancel.headers).toMatchObject({ 'mcp-session-id': 'sid', 'mcp-protocol-version': '2025-06-18' });
    expect(JSON.parse(cancel.body)).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 'b7' },
    });
  });
});

describe('readOutcome', () => {
  const result = { jsonrpc: '2.0', id: 'b1', result: { content: [] } };
  it('reads a JSON answer, or a batch', () => {
    expect(readOutcome('application/json', JSON.stringify(result), 'b1')).toEqual({
      kind: 'result',
      result: { content: [] },
    });
    expect(
      readOutcome('application/json', JSON.stringify([{ jsonrpc: '2.0', id: 'x', result: {} }, result]), 'b1').kind,
    ).toBe('result');
  });

  it('reads the response with the id out of an SSE stream, past notifications and other ids', () => {
    const sse = [
      'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n',
      'id: 7\nevent: message\ndata: {"jsonrpc":"2.0","id":"other","result":{}}\n\n',
      `event: message\r\ndata: ${JSON.stringify(result)}\r\n\r\n`,
    ].join('');
    expect(readOutcome('text/event-stream', sse, 'b1').kind).toBe('result');
    expect(sseMessages(sse)).toHaveLength(3);
  });

  it('a tool error, a JSON-RPC error, a torn stream and an HTTP error without JSON-RPC are not results', () => {
    expect(
      readOutcome(
        'application/json',
        JSON.stringify({ jsonrpc: '2.0', id: 'b1', result: { isError: true, content: [] } }),
        'b1',
      ).kind,
    ).toBe('tool-error');
    expect(
      readOutcome(
        'application/json',
        JSON.stringify({ jsonrpc: '2.0', id: 'b1', error: { code: -32000, message: 'busy' } }),
        'b1',
      ),
    ).toEqual({ kind: 'error', code: -32000, message: 'busy' });
    expect(readOutcome('text/event-stream', 'event: message\ndata: {"jsonrpc":"2.0","id":"b1","res', 'b1').kind).toBe(
      'none',
    );
    expect(readOutcome('text/html', '<h1>502</h1>', 'b1').kind).toBe('none');
    expect(readOutcome('application/json', JSON.stringify(result), 'b2').kind).toBe('none');
  });
});
