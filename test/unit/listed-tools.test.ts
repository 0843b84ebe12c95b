/**
 * A stateless 2026 HTTP request builds a server, and with it the `tools/list` entries; their JSON Schemas must be
 * converted once per backend, not per request. Counts how often the conversion reads the zod schemas' internals.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { listedTools } from '../../dist/src/server/server.js';
import type { CallBackend } from '../../dist/src/index.js';

/** A zod schema whose internals (`_zod`, what toJSONSchema walks) count their reads. */
function counted<T extends object>(schema: T, reads: { n: number }): T {
  return new Proxy(schema, {
    get(target, key, receiver) {
      if (key === '_zod') reads.n++;
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
}

describe('tools/list entries', () => {
  it('converts each schema once per backend, however many servers are built on it', () => {
    const reads = { n: 0 };
    const tool = {
      name: 'spin',
      description: 'spins',
      input: counted(z.object({ ms: z.number() }), reads),
      output: counted(z.object({ spun: z.number() }), reads),
      stages: [],
    };
    const backend = { tools: new Map([['spin', tool]]) } as unknown as CallBackend;
    const first = listedTools(backend);
    expect(first[0]?.inputSchema).toMatchObject({ type: 'object', properties: { ms: { type: 'number' } } });
    expect(first[0]?.outputSchema).toMatchObject({ type: 'object', properties: { spun: { type: 'number' } } });
    const afterWarmUp = reads.n;
    expect(afterWarmUp).toBeGreaterThan(0);
    for (let i = 0; i < 100; i++) expect(listedTools(backend)).toBe(first);
    expect(reads.n).toBe(afterWarmUp);
  });

  it('keeps backends apart', () => {
    const a = {
      tools: new Map([['a', { name: 'a', description: 'a', input: z.object({}), stages: [] }]]),
    } as unknown as CallBackend;
    const b = {
      tools: new Map([['b', { name: 'b', description: 'b', input: z.object({ x: z.string() }), stages: [] }]]),
    } as unknown as CallBackend;
    expect(listedTools(a).map((t) => t.name)).toEqual(['a']);
    expect(listedTools(b).map((t) => t.name)).toEqual(['b']);
  });
});
