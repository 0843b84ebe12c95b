/**
 * A naive way for bench/wait-kinds.ts: `naive_typecheck` gives the compiler no
 * CancellationToken, so only the hard stop ends it. (The WebAssembly baseline
 * is wasm_primes with checkEvery 0; the programs' baselines run on a plain
 * Piscina pool, bench/baselines/naive-child-worker.ts, where no child guard is.)
 */
import ts from 'typescript';
import { defineTool, z } from 'mcp-cancel-pool/tools';
import type { StageContext } from 'mcp-cancel-pool/tools';
import { inRoot } from '../../examples/tools/root.js';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export const naiveTypecheck = defineTool({
  name: 'naive_typecheck',
  description: 'Type-checks a folder with no CancellationToken (benchmark baseline).',
  input: z.object({ dir: z.string() }),
  stages: [
    function typecheck({ dir }: { dir: string }, ctx: StageContext) {
      const root = inRoot(dir, ctx.settings);
      const files = readdirSync(root, { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
        .map((f) => join(root, f));
      const program = ts.createProgram(files, { strict: true, noEmit: true, skipLibCheck: true, types: [] });
      ctx.progress(0, 1, 'checking');
      return { count: ts.getPreEmitDiagnostics(program).length };
    },
  ],
});

export default [naiveTypecheck];
