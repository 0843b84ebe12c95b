/**
 * `createToolPool` / `pool.register(server)` (src/embed): what a per-request
 * server costs (no schema conversion, the same objects handed to
 * `registerTool` every time), the metrics, and, over stdio with a fixture
 * server (test/fixtures/embed-server.ts) in both eras: deadlines, logs at the
 * client's level, and `ctx.requestClient` (2025 only).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client as Client2 } from '@modelcontextprotocol/client';
import { InMemoryTransport, McpServer } from '@modelcontextprotocol/server';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { createToolPool, type ToolPool } from '../dist/src/index.js';
import { until } from './helpers.js';
import { modernRequest } from './modern-helpers.js';

const HEAVY = fileURLToPath(new URL('../examples/embed/heavy-tools.mjs', import.meta.url));
const FIXTURE = fileURLToPath(new URL('../dist-dev/test/fixtures/embed-server.js', import.meta.url));
const SLOW = 120_000;

/** Counts every zod → JSON Schema conversion of `schema` (zod reads `_zod.toJSONSchema` once per conversion of a schema). */
function countConversions(schema: object): { readonly count: number } {
  const counter = { count: 0 };
  const internals = (schema as { _zod: Record<string, unknown> })._zod;
  if (internals.toJSONSchema !== undefined) throw new Error('this schema has its own toJSONSchema; count another way');
  Object.defineProperty(internals, 'toJSONSchema', {
    configurable: true,
    get() {
      counter.count++;
      return undefined; // zod then converts as usual
    },
  });
  return counter;
}

/** A 2.x client connected in memory to `server`. */
async function inMemory(server: McpServer): Promise<Client2> {
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client2({ name: 'in-memory', version: '1.0.0' });
  await Promise.all([server.connect(b), client.connect(a)]);
  return client;
}

describe('pool.register(server): a server per request costs no conversion', () => {
  let pool: ToolPool;
  let input: { count: number };
  let output: { count: number };
  let spinInput: object;

  beforeAll(async () => {
    const heavy = (await import(pathToFileURL(HEAVY).href)) as { spin: { input: object; output: object } };
    spinInput = heavy.spin.input;
    input = countConversions(heavy.spin.input);
    output = countConversions(heavy.spin.output);
    pool = await createToolPool({ toolModules: [HEAVY], threads: 1 });
  }, SLOW);
  afterAll(() => pool?.close());

  it(
    'the JSON Schemas are computed once, with the pool: 20 servers listing and calling the tool convert nothing more',
    async () => {
      // Once each, when the pool was made (the same module instance the pool loaded).
      expect([input.count, output.count]).toEqual([1, 1]);
      for (let i = 0; i < 20; i++) {
        const server = new McpServer({ name: 'per-request', version: '1.0.0' });
        pool.register(server);
        const client = await inMemory(server);
        const { tools } = await client.listTools();
        const spin = tools.find((t) => t.name === 'spin')!;
        expect(spin.inputSchema).toMatchObject({ type: 'object', properties: { ms: { type: 'number' } } });
        expect(spin.outputSchema).toMatchObject({ type: 'object', properties: { slices: { type: 'integer' } } });
        const r = await client.callTool({ name: 'spin', arguments: { ms: 1 } });
        expect(r.structuredContent).toMatchObject({ slices: 1 });
        await client.close();
      }
      expect([input.count, output.count]).toEqual([1, 1]);
    },
    SLOW,
  );

  it(
    'the counter is real: the same zod schema registered directly is converted on every listing',
    async () => {
      const before = input.count;
      const server = new McpServer({ name: 'direct', version: '1.0.0' });
      server.registerTool('direct', { inputSchema: spinInput as never }, (() => ({ content: [] })) as never);
      const client = await inMemory(server);
      await client.listTools();
      await client.listTools();
      await client.close();
      expect(input.count - before).toBeGreaterThanOrEqual(2);
    },
    SLOW,
  );

  it('every server gets the very same config and handler objects: registering allocates nothing of its own per tool', () => {
    const seen: unknown[][] = [];
    for (let i = 0; i < 2; i++) {
      const server = new McpServer({ name: 'spy', version: '1.0.0' });
      const register = server.registerTool.bind(server);
      server.registerTool = (name: string, config: unknown, handler: unknown) => {
        seen.push([name, config, handler]);
        return register(name as never, config as never, handler as never);
      };
      pool.register(server);
    }
    expect(seen).toHaveLength(4); // spin and count_primes, twice
    expect(seen[2]![1]).toBe(seen[0]![1]);
    expect(seen[2]![2]).toBe(seen[0]![2]);
    expect(seen[3]![1]).toBe(seen[1]![1]);
  });

  it('registers a subset by name, and refuses a name the pool does not have', () => {
    const server = new McpServer({ name: 'subset', version: '1.0.0' });
    pool.register(server, { tools: ['spin'] });
    expect(() => pool.register(new McpServer({ name: 'x', version: '1' }), { tools: ['nope'] })).toThrow(
      /the pool has no tool 'nope' \(it has: spin, count_primes\)/,
    );
  });

  it(
    "the Prometheus registry counts a cancel by its source, and the stats resource reads as serve's",
    async () => {
      const server = new McpServer({ name: 'metrics', version: '1.0.0' });
      pool.register(server);
      pool.registerStats(server);
      const client = await inMemory(server);
      const stop = new AbortController();
      let progress = 0;
      const call = client
        .callTool({ name: 'spin', arguments: { ms: 60_000 } }, { signal: stop.signal, onprogress: () => progress++ })
        .catch(() => 'rejected');
      await until(() => progress > 0, 20_000, 'progress');
      stop.abort('user');
      expect(await call).toBe('rejected');
      await until(() => pool.stats().inFlight === 0, 20_000, 'nothing in flight');
      const text = await pool.metrics.registry.metrics();
      expect(text).toMatch(/mcp_cancel_pool_cancels_total\{source="notification",role="front"\} 1/);
      expect(text).toMatch(/mcp_cancel_pool_calls_total\{tool="spin",outcome="cancelled",role="front"\} 1/);
      const read = await client.readResource({ uri: 'executor://stats' });
      const stats = JSON.parse((read.contents[0] as { text: string }).text) as Record<string, number>;
      expect(stats).toMatchObject({
        cancelled: 1,
        inFlight: 0,
        responsesDropped: 0,
        tasksCreated: 0,
        inputRequired: 0,
      });
      const listed = await client.listResources();
      expect(listed.resources).toEqual([
        expect.objectContaining({ uri: 'executor://stats', name: 'stats', mimeType: 'application/json' }),
      ]);
      await client.close();
    },
    SLOW,
  );

  it(
    'the connection closing cancels its running call: the work stops, counted as a session close',
    async () => {
      const before = pool.stats();
      const server = new McpServer({ name: 'closing', version: '1.0.0' });
      pool.register(server);
      const client = await inMemory(server);
      let progress = 0;
      const call = client
        .callTool({ name: 'spin', arguments: { ms: 60_000 } }, { onprogress: () => progress++ })
        .catch(() => 'rejected');
      await until(() => progress > 0, 20_000, 'progress');
      await client.close(); // the SDK aborts every handler of a closed connection
      expect(await call).toBe('rejected');
      await until(() => pool.stats().inFlight === 0 && pool.stats().stopping === 0, 20_000, 'the call stopped');
      const after = pool.stats();
      expect(after.cancelled - before.cancelled).toBe(1);
      expect(after.completed - before.completed).toBe(0);
      expect(await pool.metrics.registry.metrics()).toMatch(
        /mcp_cancel_pool_cancels_total\{source="session_close",role="front"\} 1/,
      );
    },
    SLOW,
  );

  it(
    'pool.close() under a running call: the work is cancelled and nothing is answered, until the client gives up',
    async () => {
      const closing = await createToolPool({ toolModules: [HEAVY], threads: 1 });
      const server = new McpServer({ name: 'pool-closing', version: '1.0.0' });
      closing.register(server);
      const client = await inMemory(server);
      const stop = new AbortController();
      let progress = 0;
      let settled = false;
      const call = client
        .callTool({ name: 'spin', arguments: { ms: 60_000 } }, { signal: stop.signal, onprogress: () => progress++ })
        .then(
          () => 'answered',
          () => 'rejected',
        )
        .finally(() => (settled = true));
      await until(() => progress > 0, 20_000, 'progress');
      await closing.close();
      expect(closing.stats()).toMatchObject({ cancelled: 1, completed: 0, inFlight: 0 });
      await new Promise((r) => setTimeout(r, 300));
      expect(settled).toBe(false); // no result, no error
      stop.abort('giving up');
      expect(await call).toBe('rejected');
      await client.close();
    },
    SLOW,
  );

  it(
    'the fairness key is read from each request',
    async () => {
      const seen: (string | undefined)[] = [];
      const keyed = await createToolPool({
        toolModules: [HEAVY],
        threads: 1,
        fairnessKey: (ctx) => (seen.push(ctx.mcpReq.method), 'tenant-a'),
      });
      try {
        const server = new McpServer({ name: 'fair', version: '1.0.0' });
        keyed.register(server);
        const client = await inMemory(server);
        await client.callTool({ name: 'spin', arguments: { ms: 1 } });
        await client.close();
        expect(seen).toEqual(['tools/call']);
      } finally {
        await keyed.close();
      }
    },
    SLOW,
  );
});

/** The fixture server spoken to in raw lines (2026: the per-request envelope is the test's to write). */
class Lines {
  readonly child: ChildProcessWithoutNullStreams = spawn(process.execPath, [FIXTURE], { stdio: 'pipe' });
  readonly lines: Record<string, unknown>[] = [];
  private partial = '';
  constructor() {
    this.child.stdout.on('data', (d: Buffer) => {
      const parts = (this.partial + d.toString()).split('\n');
      this.partial = parts.pop()!;
      for (const p of parts) this.lines.push(JSON.parse(p) as Record<string, unknown>);
    });
  }
  send(m: unknown): void {
    this.child.stdin.write(JSON.stringify(m) + '\n');
  }
  async answer(id: unknown): Promise<Record<string, unknown>> {
    await until(() => this.lines.some((l) => l.id === id && l.method === undefined), 60_000, `answer ${String(id)}`);
    return this.lines.find((l) => l.id === id && l.method === undefined)!;
  }
  close(): void {
    this.child.stdin.end();
  }
}

describe('pooled tools on an embedded server, over stdio (test/fixtures/embed-server.ts)', () => {
  const open: { close(): unknown }[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
  });

  it(
    '2025 (SDK 1.x): the deadline, logs at the level the client set, ctx.requestClient reaching the client',
    async () => {
      const client = new Client1({ name: 'embed-2025', version: '1.0.0' }, { capabilities: { roots: {} } });
      client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///a' }, { uri: 'file:///b' }] }));
      const logs: { level: string; logger?: string; data: unknown }[] = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [FIXTURE], stderr: 'pipe' }));
      open.push(client);

      const late = await client.callTool({ name: 'slow', arguments: { ms: 60_000 } });
      expect(late).toMatchObject({
        isError: true,
        content: [{ type: 'text', text: "tool 'slow' timed out after 200 ms and was stopped" }],
      });

      await client.setLoggingLevel('info');
      expect((await client.callTool({ name: 'chatty', arguments: {} })).content).toEqual([
        { type: 'text', text: 'said three things' },
      ]);
      expect(logs).toEqual([
        { level: 'info', logger: 'chatty', data: { message: 'working', data: { step: 1 } } },
        { level: 'warning', logger: 'chatty', data: 'almost done' },
      ]);

      expect((await client.callTool({ name: 'ask_roots', arguments: {} })).content).toEqual([
        { type: 'text', text: 'client has 2 roots' },
      ]);
    },
    SLOW,
  );

  it(
    '2026: logs only with the level the request carries; ctx.requestClient is refused with a clear tool error',
    async () => {
      const s = new Lines();
      open.push(s);
      s.send(modernRequest(1, 'tools/call', { name: 'chatty', arguments: {} }));
      expect((await s.answer(1)).result).toMatchObject({ content: [{ type: 'text', text: 'said three things' }] });
      expect(s.lines.filter((l) => l.method === 'notifications/message')).toEqual([]);

      s.send(modernRequest(2, 'tools/call', { name: 'chatty', arguments: {} }, { logLevel: 'warning' }));
      await s.answer(2);
      const logs = s.lines.filter((l) => l.method === 'notifications/message').map((l) => l.params);
      expect(logs).toEqual([{ level: 'warning', logger: 'chatty', data: 'almost done' }]);

      s.send(modernRequest(3, 'tools/call', { name: 'ask_roots', arguments: {} }));
      const refused = (await s.answer(3)).result as { isError?: boolean; content: { text: string }[] };
      expect(refused.isError).toBe(true);
      expect(refused.content[0]!.text).toMatch(
        /ctx\.requestClient\('roots\/list'\) is not available to a 2026-07-28 request of a pooled tool on an embedded server/,
      );

      s.send(modernRequest(4, 'tools/call', { name: 'slow', arguments: { ms: 60_000 } }));
      expect((await s.answer(4)).result).toMatchObject({
        isError: true,
        content: [{ text: "tool 'slow' timed out after 200 ms and was stopped" }],
      });
    },
    SLOW,
  );
});
