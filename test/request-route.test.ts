/**
 * `src/server/request-route.ts`: an inbound request goes straight to the
 * SDK's request dispatch, past the two response guards that fail on it, and
 * every other message takes the SDK's path. The dispatch is private in the
 * SDK's types, so the first case pins that this SDK release still has it
 * (without it the route quietly does nothing, and the cost comes back). The
 * others count, in the server's process, which messages meet the SDK's
 * response schemas while a real SDK client calls tools, lists them and
 * answers the server's own questions.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { JSONRPCErrorResponseSchema, JSONRPCResultResponseSchema } from '@modelcontextprotocol/core';
import { Server } from '@modelcontextprotocol/server';
import { requestDispatchOf } from '../dist/src/server/request-route.js';
import { openConnection } from './client-helpers.js';

type Schema = { safeParse: (value: unknown) => unknown };
const restore: (() => void)[] = [];
const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const undo of restore.splice(0)) undo();
  for (const close of open.splice(0)) await close();
});

/** Records every message the schema is asked about, in this process. */
function watch(schema: Schema): unknown[] {
  const seen: unknown[] = [];
  const own = Object.getOwnPropertyDescriptor(schema, 'safeParse');
  const original = schema.safeParse;
  schema.safeParse = (value: unknown) => {
    seen.push(value);
    return original.call(schema, value);
  };
  restore.push(() =>
    own ? Object.defineProperty(schema, 'safeParse', own) : delete (schema as Partial<Schema>).safeParse,
  );
  return seen;
}

const isRequest = (m: unknown) => typeof m === 'object' && m !== null && 'method' in m && 'id' in m;
const isResponse = (m: unknown) => typeof m === 'object' && m !== null && ('result' in m || 'error' in m);

describe('inbound requests go straight to the SDK dispatch', () => {
  it('this SDK release still has the dispatch the route hands requests to', () => {
    const server = new Server({ name: 'pin', version: '0' }, { capabilities: {} });
    expect(requestDispatchOf(server)).toBeTypeOf('function');
    expect(requestDispatchOf({})).toBeUndefined();
  });

  it('requests skip the response guards; responses and notifications still take the SDK path', async () => {
    const results = watch(JSONRPCResultResponseSchema);
    const errors = watch(JSONRPCErrorResponseSchema);
    const conn = await openConnection('memory', { threads: 1 });
    const client = new Client({ name: 'route-test', version: '0' }, { capabilities: { roots: {} } });
    let asked = 0;
    client.setRequestHandler(ListRootsRequestSchema, () => {
      asked++;
      return { roots: [{ uri: 'file:///tmp', name: 'tmp' }] };
    });
    await client.connect(conn.tap);
    open.push(async () => {
      await client.close();
      await conn.dispose();
    });

    const listed = await client.listTools();
    expect(listed.tools.map((t) => t.name)).toContain('ask_roots');
    // The tool asks the client for its roots: the client's answer is a response the SDK must match.
    const answered = await client.callTool({ name: 'ask_roots', arguments: {} });
    expect(answered.isError).toBeFalsy();
    expect(asked).toBe(1);
    // A request the SDK refuses still gets its error through the direct route.
    await expect(client.request({ method: 'no/such', params: {} }, ListRootsRequestSchema as never)).rejects.toThrow(
      /not found/i,
    );

    const seen = [...results, ...errors];
    expect(seen.filter(isRequest)).toEqual([]);
    // The roots answer met the result guard: responses keep the SDK's path.
    expect(results.filter(isResponse).length).toBeGreaterThanOrEqual(1);
    expect(conn.memory!.errors).toEqual([]);
  });
});
