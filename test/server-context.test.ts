/**
 * The request context handlers of the server built by `createMcpServer` get:
 * the one the SDK builds, with its three server methods (`log`,
 * `elicitInput`, `requestSampling`) working, though our server builds it
 * without the SDK's copies. A library host may register handlers of its own
 * on that server; this drives one from a real SDK client, in memory. Also
 * here: a tool's question to the client must be plain JSON.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { ServerContext } from '@modelcontextprotocol/server';
import { openConnection } from './client-helpers.js';

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of open.splice(0)) await close();
});

async function connect() {
  const conn = await openConnection('memory', { threads: 1 });
  const server = conn.memory!.server;
  const seen: ServerContext[] = [];
  // A host's own handler (it replaces the stats resource's): each URI uses one of the context's server methods.
  server.setRequestHandler('resources/read', async (request, ctx) => {
    seen.push(ctx);
    const { uri } = request.params;
    if (uri === 'test://log') {
      await ctx.mcpReq.log('warning', { note: 'from the handler' }, 'host');
      await ctx.mcpReq.log('info', 'twice');
    }
    if (uri === 'test://elicit') {
      const answer = await ctx.mcpReq.elicitInput({
        message: 'name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
      });
      return { contents: [{ uri, text: JSON.stringify(answer) }] };
    }
    if (uri === 'test://sample') {
      const answer = await ctx.mcpReq.requestSampling({
        messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }],
        maxTokens: 5,
      });
      return { contents: [{ uri, text: JSON.stringify(answer) }] };
    }
    return { contents: [{ uri, text: 'ok' }] };
  });
  const client = new Client(
    { name: 'context-test', version: '0' },
    { capabilities: { elicitation: {}, sampling: {}, roots: {} } },
  );
  const logs: unknown[] = [];
  const rootsAsked: unknown[] = [];
  client.setRequestHandler(ListRootsRequestSchema, (request) => {
    rootsAsked.push(request.params);
    return { roots: [] };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
  client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { name: 'Ada' } }));
  client.setRequestHandler(CreateMessageRequestSchema, () => ({
    role: 'assistant',
    content: { type: 'text', text: 'hello' },
    model: 'm',
  }));
  await client.connect(conn.tap);
  open.push(async () => {
    await client.close();
    await conn.dispose();
  });
  return { client, seen, logs, rootsAsked };
}

describe('the request context of createMcpServer', () => {
  it('carries the request, its signal and no HTTP part in memory', async () => {
    const { client, seen } = await connect();
    await client.readResource({ uri: 'test://plain' });
    const ctx = seen[0]!;
    expect(ctx.mcpReq.method).toBe('resources/read');
    expect(typeof ctx.mcpReq.id).toBe('number');
    expect(ctx.mcpReq.signal).toBeInstanceOf(AbortSignal);
    expect(ctx.http).toBeUndefined();
    expect(typeof ctx.mcpReq.notify).toBe('function');
  });

  it('log sends notifications/message to the client', async () => {
    const { client, logs } = await connect();
    await client.readResource({ uri: 'test://log' });
    expect(logs).toEqual([
      { level: 'warning', data: { note: 'from the handler' }, logger: 'host' },
      { level: 'info', data: 'twice' },
    ]);
  });

  it('elicitInput and requestSampling ask the client and return its answers', async () => {
    const { client } = await connect();
    const elicited = await client.readResource({ uri: 'test://elicit' });
    expect(JSON.parse((elicited.contents[0] as { text: string }).text)).toEqual({
      action: 'accept',
      content: { name: 'Ada' },
    });
    const sampled = await client.readResource({ uri: 'test://sample' });
    expect(JSON.parse((sampled.contents[0] as { text: string }).text)).toMatchObject({
      role: 'assistant',
      content: { type: 'text', text: 'hello' },
      model: 'm',
    });
  });

  it('gives every request a context of its own', async () => {
    const { client, seen } = await connect();
    await Promise.all([client.readResource({ uri: 'test://plain' }), client.readResource({ uri: 'test://plain' })]);
    expect(seen).toHaveLength(2);
    expect(seen[0]).not.toBe(seen[1]);
    expect(seen[0]!.mcpReq.id).not.toBe(seen[1]!.mcpReq.id);
    expect(seen[0]!.mcpReq.signal).not.toBe(seen[1]!.mcpReq.signal);
  });

  // In memory nothing would serialize it: before the worker checked, the client got the cyclic request.
  it("a tool's question with a reference cycle fails in the tool and never reaches the client", async () => {
    const { client, rootsAsked } = await connect();
    const result = await client.callTool({ name: 'ask_cyclic', arguments: {} });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain("ctx.requestClient('roots/list') params");
    expect(rootsAsked).toEqual([]);
    const ok = await client.callTool({ name: 'ask_roots', arguments: {} });
    expect(ok.isError).toBeFalsy();
    expect(rootsAsked).toHaveLength(1);
  });
});
