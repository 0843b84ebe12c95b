/**
 * Protocol errors at the door, over the real wire (stdio and Streamable
 * HTTP): a request id reused while its call is in flight, malformed
 * envelopes, invalid tools/call params, and error messages that read once.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import {
  RawServer,
  sleep,
  startHttpServer,
  stats,
  stdioClient,
  until,
  type HttpServerProcess,
  type WiredClient,
} from './helpers.js';
import { sseMessages, within, type Msg } from './http-helpers.js';

const call = (id: unknown, params: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params });
const spin = (id: unknown, ms: number) => call(id, { name: 'spin', arguments: { ms } });
const ping = (id: unknown) => ({ jsonrpc: '2.0', id, method: 'ping' });
const cancel = (requestId: unknown) => ({
  jsonrpc: '2.0',
  method: 'notifications/cancelled',
  params: { requestId, reason: 'test' },
});

/** A zod issue list dumped as JSON, as the SDK's -32603 carried it. */
const ZOD_DUMP = /^\s*\[|"code":|\n/;

describe('stdio', () => {
  let servers: RawServer[] = [];
  let clients: WiredClient[] = [];
  afterEach(async () => {
    for (const s of servers) s.kill();
    await Promise.all(clients.map((c) => c.close()));
    servers = [];
    clients = [];
  });
  const start = async () => {
    const s = new RawServer(['--threads', '1']);
    servers.push(s);
    await s.initialize();
    return s;
  };

  it('a ping reusing the id of a running call is refused; the cancelled call then gets nothing; new calls work', async () => {
    const s = await start();
    s.send(spin('x', 20_000));
    await until(async () => (await s.stats()).running === 1, 10_000, 'call x running');
    s.send(ping('x'));
    const refusal = (await s.next((m) => m.id === 'x')) as Msg;
    expect(refusal.error?.code).toBe(ErrorCode.InvalidRequest);
    expect(refusal.error?.message).toContain('"x"');
    expect(refusal.error?.message).toMatch(/already in flight/);
    s.send(cancel('x'));
    await until(async () => (await s.stats()).running === 0, 10_000, 'worker released');
    await sleep(300);
    expect(s.lines.filter((m) => (m as Msg).id === 'x')).toEqual([refusal]);
    expect(await s.stats()).toMatchObject({ cancelled: 1, completed: 0, responsesDropped: 0 });
    // The connection still serves, and once the call is over its id is free again.
    s.send(spin('y', 1));
    expect(await s.next((m) => m.id === 'y')).toHaveProperty('result.structuredContent.sliceCount', 1);
    s.send(ping('x'));
    expect(await s.next((m) => m.id === 'x' && 'result' in m, 5_000, s.lines.indexOf(refusal) + 1)).toEqual({
      jsonrpc: '2.0',
      id: 'x',
      result: {},
    });
  });

  it('a duplicate refused while the first request runs leaves the first one answered normally', async () => {
    const s = await start();
    s.send(spin(7, 400));
    s.send(call(7, { name: 'spin', arguments: { ms: 1 } }));
    s.send(ping(7));
    const first = await s.next((m) => m.id === 7 && 'result' in m, 10_000);
    expect(first).toHaveProperty('result.structuredContent.sliceCount', 400);
    const answers = s.lines.filter((m) => (m as Msg).id === 7) as Msg[];
    expect(answers.map((m) => m.error?.code ?? 'result')).toEqual([
      ErrorCode.InvalidRequest,
      ErrorCode.InvalidRequest,
      'result',
    ]);
  });

  it('invalid tools/call params are -32602 in words, not -32603 with a zod dump', async () => {
    const s = await start();
    s.send(call('no-name', { arguments: { ms: 1 } }));
    s.send(call('args-string', { name: 'spin', arguments: 'fast' }));
    s.send(call('args-array', { name: 'spin', arguments: [1] }));
    s.send(call('name-number', { name: 5 }));
    const answer = async (id: string) => ((await s.next((m) => m.id === id)) as Msg).error;
    const noName = await answer('no-name');
    expect(noName).toEqual({
      code: ErrorCode.InvalidParams,
      message: 'invalid tools/call params: name: expected string, received undefined',
    });
    for (const [id, field] of [
      ['args-string', 'arguments'],
      ['args-array', 'arguments'],
      ['name-number', 'name'],
    ] as const) {
      const e = await answer(id);
      expect(e?.code).toBe(ErrorCode.InvalidParams);
      expect(e?.message).toMatch(new RegExp(`^invalid tools/call params: ${field}: expected \\w+, received \\w+$`));
      expect(e?.message).not.toMatch(ZOD_DUMP);
    }
    // Nothing was reserved for them, and the server serves on.
    expect(await s.stats()).toMatchObject({ inFlight: 0, running: 0 });
    s.send(spin('after', 1));
    expect(await s.next((m) => m.id === 'after')).toHaveProperty('result');
  });

  it("a tool's own argument schema failing is a tool error in words (SEP-1303), not a zod dump", async () => {
    const s = await start();
    s.send(call('bad-ms', { name: 'spin', arguments: { ms: 'soon' } }));
    const m = (await s.next((x) => x.id === 'bad-ms')) as { result: { isError: boolean; content: { text: string }[] } };
    expect(m.result.isError).toBe(true);
    expect(m.result.content[0]!.text).toBe("invalid arguments for tool 'spin': ms: expected number, received string");
  });

  it('error messages carry no "MCP error <code>:" prefix on the wire, so an SDK client reads it once', async () => {
    const s = await start();
    s.send(call('nope', { name: 'no_such_tool', arguments: {} }));
    s.send({ jsonrpc: '2.0', id: 'res', method: 'resources/read', params: { uri: 'nope://x' } });
    expect(((await s.next((m) => m.id === 'nope')) as Msg).error).toEqual({
      code: ErrorCode.InvalidParams,
      message: "unknown tool 'no_such_tool'",
    });
    expect(((await s.next((m) => m.id === 'res')) as Msg).error).toEqual({
      code: ErrorCode.InvalidParams,
      message: 'unknown resource nope://x',
      data: { uri: 'nope://x' },
    });

    const c = await stdioClient(['--threads', '1']);
    clients.push(c);
    const unknown = await c.client.callTool({ name: 'no_such_tool', arguments: {} }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(McpError);
    expect((unknown as McpError).message).toBe("MCP error -32602: unknown tool 'no_such_tool'");
    const invalid = await c.client
      .request({ method: 'tools/call', params: { name: 'spin', arguments: 'fast' } }, CallToolResultSchema)
      .catch((e: unknown) => e);
    expect(invalid).toMatchObject({
      code: ErrorCode.InvalidParams,
      message: 'MCP error -32602: invalid tools/call params: arguments: expected record, received string',
    });
  });
});

describe('Streamable HTTP', () => {
  let server: HttpServerProcess;
  const clients: Client[] = [];
  beforeAll(async () => {
    server = await startHttpServer(['--threads', '2']);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await server.stop();
  });

  async function connect(): Promise<{ client: Client; sessionId: string }> {
    const transport = new StreamableHTTPClientTransport(server.url);
    const client = new Client({ name: 'protocol-errors', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return { client, sessionId: transport.sessionId! };
  }

  function post(sessionId: string, body: unknown): Promise<globalThis.Response> {
    return fetch(server.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify(body),
    });
  }

  it('a ping reusing the id of a running call is refused with 400; the cancelled call gets nothing, its stream ends; new calls work', async () => {
    const { client, sessionId } = await connect();
    const before = await stats(client);
    const first = sseMessages(await post(sessionId, spin('x', 20_000)));
    await until(async () => (await stats(client)).running === before.running + 1, 10_000, 'call x running');
    const dup = await post(sessionId, ping('x'));
    expect(dup.status).toBe(400);
    const refusal = (await dup.json()) as Msg;
    expect(refusal).toMatchObject({ id: 'x', error: { code: ErrorCode.InvalidRequest } });
    expect(refusal.error?.message).toContain('"x"');
    await client.notification({ method: 'notifications/cancelled', params: { requestId: 'x', reason: 'test' } });
    await within(first.ended, 10_000, 'the cancelled call’s stream ended');
    expect(first.messages.filter((m) => m.id === 'x')).toEqual([]);
    await until(async () => (await stats(client)).running === before.running, 10_000, 'worker released');
    expect(await stats(client)).toMatchObject({ cancelled: before.cancelled + 1, completed: before.completed });
    const next = await client.callTool({ name: 'spin', arguments: { ms: 1 } });
    expect(next.isError).toBeFalsy();
    // Once the call is over its id is free again.
    const again = sseMessages(await post(sessionId, ping('x')));
    await within(again.ended, 10_000, 'the ping answered');
    expect(again.messages).toEqual([{ jsonrpc: '2.0', id: 'x', result: {} }]);
  });

  it('a second POST with the id of a call still in flight is refused, and the call gets exactly its own answer', async () => {
    const { client, sessionId } = await connect();
    for (let i = 0; i < 3; i++) {
      const id = `race-${i}`;
      // The duplicate leaves only once the call is seen running (not after a fixed delay, which a loaded machine
      // outruns); the call's 4 s are the margin for that sighting and the duplicate's trip. Slices of 500 ms: each
      // slice boundary yields the thread, and under four CPU hogs the default 10 ms slices took over 10 s in all.
      const before = await stats(client);
      const first = post(sessionId, call(id, { name: 'spin', arguments: { ms: 4_000, stageMs: 500 } }));
      await until(async () => (await stats(client)).running === before.running + 1, 10_000, `call ${id} running`);
      const refused = await post(sessionId, ping(id));
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ id, error: { code: ErrorCode.InvalidRequest } });
      const admitted = await first;
      expect(admitted.status).toBe(200);
      const stream = sseMessages(admitted);
      await within(stream.ended, 60_000, 'the admitted request answered');
      expect(stream.messages).toHaveLength(1);
      expect(stream.messages[0]).toHaveProperty('id', id);
      expect(stream.messages[0]).toHaveProperty('result.content');
    }
  }, 240_000);

  it('a batch that repeats an id is refused whole, with an error for the repeat; nothing in it runs', async () => {
    const { client, sessionId } = await connect();
    const before = await stats(client);
    const res = await post(sessionId, [spin('d', 1), ping('d'), ping('other')]);
    expect(res.status).toBe(400);
    const body = (await res.json()) as Msg[];
    expect(body).toHaveLength(1);
    expect(body[0]).toMatchObject({ id: 'd', error: { code: ErrorCode.InvalidRequest } });
    expect(body[0]!.error?.message).toContain('"d"');
    await sleep(200);
    expect((await stats(client)).completed).toBe(before.completed);
  });

  it('a request with a good id and a bad envelope is answered with its id, -32600, saying what is wrong', async () => {
    const { client, sessionId } = await connect();
    const before = await stats(client);
    const res = await post(
      sessionId,
      call('env', { name: 'spin', arguments: { ms: 1 }, _meta: { progressToken: {} } }),
    );
    expect(res.status).toBe(400);
    const body = (await res.json()) as Msg;
    expect(body).toMatchObject({ jsonrpc: '2.0', id: 'env', error: { code: ErrorCode.InvalidRequest } });
    expect(body.error?.message).toMatch(/^invalid JSON-RPC message: params\._meta\.progressToken: /);
    // In a batch: one error per bad message, with its id (null if it has none); the good ones do not run.
    const batch = await post(sessionId, [
      spin('good', 1),
      { jsonrpc: '2.0', id: 'bad', method: 'tools/call', params: 'x' },
      { jsonrpc: '1.0', result: 1 },
    ]);
    expect(batch.status).toBe(400);
    const errors = (await batch.json()) as Msg[];
    expect(errors.map((e) => [e.id, e.error?.code])).toEqual([
      ['bad', ErrorCode.InvalidRequest],
      [null, ErrorCode.InvalidRequest],
    ]);
    await sleep(200);
    expect((await stats(client)).completed).toBe(before.completed);
  });

  it('invalid tools/call params are -32602 in words; messages read once through the SDK client', async () => {
    const { client, sessionId } = await connect();
    const raw = sseMessages(await post(sessionId, call('no-name', { arguments: {} })));
    await within(raw.ended, 10_000, 'answered');
    expect(raw.messages).toEqual([
      {
        jsonrpc: '2.0',
        id: 'no-name',
        error: {
          code: ErrorCode.InvalidParams,
          message: 'invalid tools/call params: name: expected string, received undefined',
        },
      },
    ]);
    const invalid = await client
      .request({ method: 'tools/call', params: { name: 'spin', arguments: [1] } }, CallToolResultSchema)
      .catch((e: unknown) => e);
    expect(invalid).toMatchObject({
      code: ErrorCode.InvalidParams,
      message: 'MCP error -32602: invalid tools/call params: arguments: expected record, received array',
    });
    const unknown = await client.callTool({ name: 'no_such_tool', arguments: {} }).catch((e: unknown) => e);
    expect((unknown as Error).message).toBe("MCP error -32602: unknown tool 'no_such_tool'");
  });
});
