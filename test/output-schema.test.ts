/**
 * Tools' outputSchema, seen by the 2.x SDK client over stdio (the server as a
 * subprocess): every built-in declares one and its results pass the client's
 * own validation (which throws on a mismatch, shown here with a schema the
 * results do not meet); a tool whose result breaks its schema gets a tool
 * error from the worker instead of sending the mismatch.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { CLI } from './helpers.js';

const OUTPUT_TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/output-tools.js', import.meta.url));
const BUILTINS = ['spin', 'hash_file', 'compress', 'render_mandelbrot', 'count_primes'];

let root: string;
let client: Client;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'output-schema-'));
  writeFileSync(join(root, 'a.txt'), 'hello outputSchema\n'.repeat(100));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'serve', '--threads', '2', '--root', root, '--tools', OUTPUT_TOOLS],
    stderr: 'pipe',
  });
  client = new Client({ name: 'output-schema-test', version: '1.0.0' });
  await client.connect(transport);
}, 60_000);

afterAll(async () => {
  await client?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

const textOf = (r: { content?: unknown }) =>
  ((r.content ?? []) as { type: string; text?: string }[])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');

describe('outputSchema', () => {
  it('every built-in tool lists a strict object outputSchema', async () => {
    const { tools } = await client.listTools();
    for (const name of BUILTINS) {
      const tool = tools.find((t) => t.name === name);
      expect(tool?.outputSchema, name).toMatchObject({ type: 'object', additionalProperties: false });
      expect(Object.keys((tool!.outputSchema as { properties: object }).properties).length, name).toBeGreaterThan(0);
    }
  });

  it("each built-in's structuredContent passes the SDK client's validation against it", async () => {
    await client.listTools(); // the client validates against the schemas it listed
    const calls: [string, Record<string, unknown>, Record<string, unknown>][] = [
      ['spin', { ms: 5 }, { sliceCount: 5 }],
      ['count_primes', { limit: 1000 }, { limit: 1000, count: 168, largest: 997, twinPairs: 35 }],
      ['hash_file', { path: 'a.txt' }, { algorithm: 'sha256', bytes: 1900, path: 'a.txt' }],
      ['compress', { text: 'aaaa'.repeat(100), format: 'gzip' }, { format: 'gzip', level: null, inputBytes: 400 }],
      ['render_mandelbrot', { width: 32, height: 32, maxIterations: 50 }, { width: 32, height: 32, maxIterations: 50 }],
    ];
    for (const [name, args, expected] of calls) {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
      expect(result.structuredContent, name).toMatchObject(expected);
    }
  });

  it('the client does reject a result that breaks the schema it holds (so the check above can fail)', async () => {
    const { tools } = await client.listTools();
    const spin = tools.find((t) => t.name === 'spin')!;
    const stricter = {
      ...spin,
      outputSchema: {
        type: 'object' as const,
        properties: { sliceCount: { type: 'string' } },
        required: ['sliceCount'],
      },
    };
    await expect(client.callTool({ name: 'spin', arguments: { ms: 1 } }, { toolDefinition: stricter })).rejects.toThrow(
      /structured content does not match the tool's output schema|sliceCount/i,
    );
  });

  it("a result that breaks its tool's outputSchema becomes a tool error naming the mismatch; a matching one goes through", async () => {
    await client.listTools();
    const wrong = await client.callTool({ name: 'wrong_output', arguments: {} });
    expect(wrong.isError).toBe(true);
    expect(wrong.structuredContent).toBeUndefined();
    expect(textOf(wrong)).toMatch(
      /tool 'wrong_output' returned structuredContent that does not match its outputSchema: n: .+/,
    );
    const extra = await client.callTool({ name: 'extra_output', arguments: {} });
    expect(extra.isError).toBe(true);
    expect(textOf(extra)).toMatch(/does not match its outputSchema: .*extra/);
    const none = await client.callTool({ name: 'no_structured', arguments: {} });
    expect(none.isError).toBe(true);
    expect(textOf(none)).toMatch(/tool 'no_structured' declares an outputSchema but returned no structuredContent/);
    const right = await client.callTool({ name: 'right_output', arguments: {} });
    expect(right.isError).toBeFalsy();
    expect(right.structuredContent).toEqual({ n: 3 });
  });
});
