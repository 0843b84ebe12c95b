/**
 * `src/cli/fast-schemas.ts` (zod's `zod/compile`) only helps if it reaches
 * the SDK's own schemas: the SDK must resolve the same zod as we do, and the
 * command line must import it before anything builds a schema. Each case runs
 * in a fresh `node` process, the way the server loads its modules.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const FAST = new URL('../dist/src/cli/fast-schemas.js', import.meta.url).href;

/** Parses a good and a bad message with the SDK's request schema (its `isJSONRPCRequest` guard); prints whether it took a compiled path and the issues. */
const PROBE = `
import { JSONRPCRequestSchema } from '@modelcontextprotocol/core';
const good = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'spin', arguments: { ms: 0 } } };
const bad = { jsonrpc: '2.0', id: 1.5, method: 7 };
const ok = JSONRPCRequestSchema.parse(good);
const failed = JSONRPCRequestSchema.safeParse(bad);
console.log(JSON.stringify({
  compiled: typeof JSONRPCRequestSchema._zod.bag.fallbackRun === 'function',
  same: JSON.stringify(ok) === JSON.stringify(good),
  issues: failed.success ? null : failed.error.issues,
}));`;

function probe(first: string): { compiled: boolean; same: boolean; issues: unknown } {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', first + PROBE], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return JSON.parse(out) as { compiled: boolean; same: boolean; issues: unknown };
}

describe('zod/compile reaches the SDK', () => {
  it('the SDK line resolves the zod we import, so our import compiles its schemas', () => {
    const plain = probe('');
    const fast = probe(`import ${JSON.stringify(FAST)};\n`);
    expect(plain.compiled).toBe(false);
    expect(fast.compiled).toBe(true);
    expect(fast.same).toBe(true);
    expect(plain.same).toBe(true);
    // A failed parse still goes through zod's runtime parser: the same issues, the same texts.
    expect(fast.issues).toEqual(plain.issues);
    expect(plain.issues).not.toBeNull();
  });

  it('the command line imports it before any other module', () => {
    const main = readFileSync(resolve(ROOT, 'dist/src/cli/main.js'), 'utf8');
    const first = /^import\s[^;]*?['"]([^'"]+)['"]/m.exec(main);
    expect(first?.[1]).toBe('./fast-schemas.js');
  });
});
