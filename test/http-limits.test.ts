/**
 * Issue 12, defect 4: the HTTP session limit, and no session for an
 * initialize the transport refused. The session count is observed through
 * the limit: refused initializes that left sessions behind would fill it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpClient, initializeBody, listening, messagesIn, post, type Started } from './http-helpers.js';

type Listening = Extract<Started, { kind: 'listening' }>;

describe('--max-sessions', () => {
  let server: Listening;
  beforeAll(async () => {
    server = await listening(['--threads', '1', '--max-sessions', '2']);
  });
  afterAll(() => server.stop());

  it('initializes the transport refuses (406: Accept lacks application/json or text/event-stream) leave no session; the limit then admits exactly two', async () => {
    const refusals = [
      { headers: { accept: 'application/json' }, body: initializeBody(), status: 406 },
      { headers: { accept: 'text/event-stream' }, body: initializeBody(), status: 406 },
      { headers: { accept: '*/*' }, body: initializeBody(), status: 406 },
    ];
    for (let i = 0; i < 200; i++) {
      const refusal = refusals[i % refusals.length]!;
      const r = await post(server.url, refusal.body, refusal.headers);
      expect(r.status).toBe(refusal.status);
      expect(r.headers['mcp-session-id']).toBeUndefined();
    }

    const first = await httpClient(server.url);
    const second = await httpClient(server.url);
    try {
      expect((await first.client.callTool({ name: 'spin', arguments: { ms: 1 } })).isError).toBeFalsy();
      expect((await second.client.callTool({ name: 'spin', arguments: { ms: 1 } })).isError).toBeFalsy();

      // The third is refused with a JSON-RPC error that names the limit and the flag, answering the initialize's id.
      const third = await post(server.url, initializeBody('third'));
      expect(third.status).toBe(503);
      expect(third.headers['mcp-session-id']).toBeUndefined();
      const [error] = messagesIn(third.text);
      expect(error).toMatchObject({ jsonrpc: '2.0', id: 'third', error: { code: -32000 } });
      expect(error!.error!.message).toMatch(/session limit reached: 2 live sessions \(--max-sessions\)/);
      // An SDK client sees the refusal as a failed connect, not a hang.
      await expect(httpClient(server.url)).rejects.toThrow(/503|session limit/);

      // Sessions already open keep working, and ending one frees its place.
      expect((await first.client.callTool({ name: 'spin', arguments: { ms: 1 } })).isError).toBeFalsy();
      await second.transport.terminateSession();
      const again = await post(server.url, initializeBody('again'));
      expect(again.status).toBe(200);
      expect(again.headers['mcp-session-id']).toBeTruthy();
    } finally {
      await first.client.close();
      await second.client.close();
    }
  });
});

describe('--max-sessions under concurrent initializes', () => {
  it('admits exactly the limit when many arrive at once', async () => {
    const server = await listening(['--threads', '1', '--max-sessions', '3']);
    try {
      const replies = await Promise.all(
        Array.from({ length: 12 }, (_, i) => post(server.url, initializeBody(`c${i}`))),
      );
      const statuses = replies.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 200, 200, ...Array<number>(9).fill(503)]);
      expect(new Set(replies.map((r) => r.headers['mcp-session-id']).filter(Boolean)).size).toBe(3);
    } finally {
      await server.stop();
    }
  });
});
