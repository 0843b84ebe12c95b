/**
 * The naive ways, for bench/wait-kinds.ts: the same work as the example
 * tools with the cancel ignored. `naive_gzip` awaits gzip and never looks at
 * the signal (the child runs to its end, and survives the hard stop);
 * `naive_typecheck` gives the compiler no token (only the hard stop ends
 * it). The WebAssembly baseline is wasm_primes with checkEvery 0.
 */
import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import ts from 'typescript';
import { defineTool, z } from 'mcp-cancel-pool/tools';
import type { StageContext } from 'mcp-cancel-pool/tools';
import { inRoot } from '../../examples/tools/root.js';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export const naiveGzip = defineTool({
  name: 'naive_gzip',
  description: 'gzip -9 of a file, the signal ignored (benchmark baseline).',
  input: z.object({ path: z.string() }),
  stages: [
    async function compress({ path }: { path: string }, ctx: StageContext) {
      const child = spawn('gzip', ['-9', '-c'], { stdio: ['pipe', 'ignore', 'ignore'] });
      ctx.progress(0, 1, 'started');
      createReadStream(inRoot(path, ctx.settings))
        .pipe(child.stdin)
        .on('error', () => {});
      const code = await new Promise((resolve) => child.once('close', resolve));
      return { code, pid: child.pid };
    },
  ],
});

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

export default [naiveGzip, naiveTypecheck];
