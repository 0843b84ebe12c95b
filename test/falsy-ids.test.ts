/**
 * Issue 12, defect 6: a cancelled call whose id is 0 or "" (falsy, so the
 * SDK's own cancel path ignores it). Nothing may be sent for it; over HTTP
 * its POST stream must still end, and the server keep serving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawServer, stats, until } from './helpers.js';
import { httpClient, listening, MCP_HEADERS, sseMessages, within, type Started } from './http-helpers.js';

const FALSY_IDS = [0, ''] as const;
const longCall = (id: number | string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'spin', arguments: { ms: 30_000 } },
});

describe('over Streamable HTTP', () => {
  let server: Extract<Started, { kind: 'listening' }>;
  beforeAll(async () => {
    server = await listening(['--threads', '1', '--grace-ms', '10000']);
  });
  afterAll(() => server.stop());

  for (const id of FALSY_IDS) {
    it(`a cancelled call with id ${JSON.stringify(id)}: its POST stream ends with nothing in it, and the next call is served`, async () => {
      const { client, transport } = await httpClient(server.url);
      try {
        const before = await stats(client);
        const res = await fetch(server.url, {
          method: 'POST',
          headers: { ...MCP_HEADERS, 'mcp-session-id': transport.sessionId!, 'mcp-protocol-version': '2025-06-18' },
          body: JSON.stringify(longCall(id)),
        });
        expect(res.status).toBe(200);
        const stream = sseMessages(res);
        await until(async () => (await stats(client)).running === 1, 10_000, 'the call running');
        await client.notification({
          method: 'notifications/cancelled',
          params: { requestId: id, reason: 'falsy id test' },
        });
        await within(stream.ended, 10_000, 'the POST stream of the cancelled call did not end');
        expect(stream.messages).toEqual([]);
        await until(async () => (await stats(client)).running === 0, 10_000, 'worker released');
        const after = await stats(client);
        expect(after.cancelled - before.cancelled).toBe(1);
        expect(after.completed - before.completed).toBe(0);
        expect((await client.callTool({ name: 'spin', arguments: { ms: 1 } })).isError).toBeFalsy();
      } finally {
        await client.close();
      }
    });
  }
});

describe('over stdio', () => {
  it('cancelled calls with ids 0 and "": nothing is sent for either, and the server keeps serving', async () => {
    const server = new RawServer(['--threads', '1', '--grace-ms', '10000']);
    try {
      await server.initialize();
      for (const id of FALSY_IDS) {
        server.send(longCall(id));
        await until(async () => (await server.stats()).running === 1, 10_000, 'the call running');
        server.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } });
        await until(async () => (await server.stats()).running === 0, 10_000, 'worker released');
      }
      server.send({
        jsonrpc: '2.0',
        id: 'after',
        method: 'tools/call',
        params: { name: 'spin', arguments: { ms: 1 } },
      });
      expect(await server.next((m) => m.id === 'after', 10_000)).toHaveProperty('result');
      expect(server.lines.filter((m) => (m as { id?: unknown }).id === 0 || (m as { id?: unknown }).id === '')).toEqual(
        [],
      );
      expect((await server.stats()).cancelled).toBe(2);
    } finally {
      server.kill();
    }
  });
});
