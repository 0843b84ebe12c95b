/**
 * Results the main thread finds plainly valid skip the SDK's CallToolResult
 * check (src/server/result-shape.ts). The unit part holds the hand check to
 * the SDK's schema: what it accepts, the schema accepts and leaves as it is.
 * The wire part, over stdio in both eras, shows the SDK's check still runs on
 * every other result: a malformed one gets its error, an unusual valid one
 * arrives whole.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallToolResultSchema } from '@modelcontextprotocol/core';
import { plainlyValidResult } from '../dist/src/server/result-shape.js';
import { RawServer } from './helpers.js';
import { modernRequest } from './modern-helpers.js';

const TOOLS = fileURLToPath(new URL('../dist-dev/test/fixtures/result-shape-tools.js', import.meta.url));

const plain: unknown[] = [
  { content: [] },
  { content: [{ type: 'text', text: '' }] },
  {
    content: [
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b' },
    ],
    isError: true,
  },
  { content: [{ type: 'text', text: 'a' }], structuredContent: { n: 1, nested: { list: [1, 'x', null] } } },
  { content: [{ type: 'text', text: 'a' }], structuredContent: {}, isError: false },
  { content: [{ type: 'text', text: 'a' }], structuredContent: undefined },
  JSON.parse('{"content":[{"type":"text","text":"from JSON"}]}'),
];

const notPlain: unknown[] = [
  null,
  'text',
  [],
  {},
  { structuredContent: { n: 1 } },
  { content: 'text' },
  { content: [{ type: 'text', text: 3 }] },
  { content: [{ type: 'text' }] },
  { content: [{ type: 'image', data: 'AA==', mimeType: 'image/png' }] },
  { content: [{ type: 'text', text: 'a', annotations: { priority: 1 } }] },
  { content: [{ type: 'text', text: 'a', _meta: {} }] },
  { content: [null] },
  { content: [{ type: 'text', text: 'a' }], structuredContent: [1, 2] },
  { content: [{ type: 'text', text: 'a' }], structuredContent: 'x' },
  { content: [{ type: 'text', text: 'a' }], isError: 'yes' },
  { content: [{ type: 'text', text: 'a' }], _meta: { k: 1 } },
  { content: [{ type: 'text', text: 'a' }], task: { taskId: 't' } },
  { content: [{ type: 'text', text: 'a' }], resultType: 'complete' },
  Object.assign(Object.create({ inherited: true }) as object, { content: [] }),
  { content: [{ type: 'text', text: 'a' }], structuredContent: new Map() },
  {
    content: [
      Object.assign(Object.create(null) as object, { type: 'text', text: 'a' }),
      new (class Block {
        type = 'text';
        text = 'b';
      })(),
    ],
  },
];

describe('plainlyValidResult', () => {
  it.each(plain.map((r) => [JSON.stringify(r) ?? String(r), r]))(
    'accepts %s, which the SDK schema accepts and leaves unchanged',
    (_, result) => {
      expect(plainlyValidResult(result)).toBe(true);
      const parsed = CallToolResultSchema.safeParse(result);
      expect(parsed.success).toBe(true);
      expect(JSON.parse(JSON.stringify(parsed.data))).toEqual(JSON.parse(JSON.stringify(result)));
    },
  );

  it.each(notPlain.map((r, i) => [i, r]))('leaves case %i to the SDK schema', (_, result) => {
    expect(plainlyValidResult(result)).toBe(false);
  });
});

describe.each([
  ['2025-11-25 (initialize)', false],
  ['2026-07-28 (per-request envelope)', true],
])('results the SDK still checks, %s', (_, modern) => {
  let s: RawServer;
  let n = 0;
  const call = async (name: string): Promise<Record<string, unknown>> => {
    const id = `c${n++}`;
    const params = { name, arguments: {} };
    s.send(modern ? modernRequest(id, 'tools/call', params) : { jsonrpc: '2.0', id, method: 'tools/call', params });
    return s.next((m) => m.id === id);
  };

  beforeAll(async () => {
    s = new RawServer(['--threads', '1', '--spare-threads', '0', '--tools', TOOLS]);
    if (!modern) await s.initialize();
  }, 60_000);
  afterAll(() => s?.kill());

  it("a text block whose text is not a string gets the SDK's invalid-result error", async () => {
    const m = await call('bad_text');
    expect(m.result).toBeUndefined();
    expect(m.error).toMatchObject({ code: -32602, message: expect.stringMatching(/Invalid tools\/call result/) });
  });

  it('a block of an unknown type gets the same error', async () => {
    const m = await call('unknown_block');
    expect(m.error).toMatchObject({ code: -32602, message: expect.stringMatching(/Invalid tools\/call result/) });
  });

  it('a valid result beyond the plain shape arrives whole: annotations, _meta, its own keys', async () => {
    const m = await call('extra_keys');
    expect(m.error).toBeUndefined();
    expect(m.result).toMatchObject({
      content: [{ type: 'text', text: 'kept', annotations: { priority: 0.5 } }],
      _meta: { 'example.com/trace': 'abc' },
      custom: { kept: true },
    });
  });

  it("a result with keys named like the worker's stopped outcome is still answered as a result", async () => {
    // The worker posts a bare result when nothing else was reported; the main thread tells it from its tagged
    // outcomes by `content` alone, never by `kind`, which a result may carry as its own key.
    const m = await call('kind_key');
    expect(m.error).toBeUndefined();
    expect(m.result).toMatchObject({
      content: [{ type: 'text', text: 'still a result' }],
      kind: 'stopped',
      stage: 'result',
      reports: { posted: 3 },
    });
  });

  it('a plainly valid result arrives as the tool returned it (spin)', async () => {
    const id = `spin${n++}`;
    const params = { name: 'spin', arguments: { ms: 0 } };
    s.send(modern ? modernRequest(id, 'tools/call', params) : { jsonrpc: '2.0', id, method: 'tools/call', params });
    const m = await s.next((x) => x.id === id);
    const result = m.result as Record<string, unknown>;
    expect(result.content).toEqual([{ type: 'text', text: expect.stringMatching(/^spun 1 slices in /) }]);
    expect(result.structuredContent).toEqual({ sliceCount: 1, elapsedMs: expect.any(Number) });
    // 2026 answers say they are complete (the SDK stamps it when it encodes); 2025 answers have no such key.
    expect(result.resultType).toBe(modern ? 'complete' : undefined);
  });
});
