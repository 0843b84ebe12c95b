/**
 * `typecheck`: type-checks the TypeScript files of a folder with the
 * compiler API, and stops when the call is cancelled. The compiler takes a
 * `CancellationToken`, not an `AbortSignal`: its `isCancellationRequested`
 * reads `ctx.stopped` (one atomic load, and a cancellation check for the gap
 * measurement), and the checker asks it at every function and class it
 * checks. Parsing takes no token, so the compiler host checks before each
 * file it reads.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { defineTool, z, type StageContext } from 'mcp-cancel-pool/tools';
import { inRoot } from './root.js';

/** The `.ts` files under `dir`, node_modules left out. */
function sources(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(c|m)?ts$/.test(f) && !f.endsWith('.d.ts') && !f.split(/[\\/]/).includes('node_modules'))
    .map((f) => join(dir, f));
}

export default defineTool({
  name: 'typecheck',
  description: 'Type-checks the TypeScript files of a folder (strict); returns the diagnostics.',
  input: z.object({ dir: z.string().describe('A folder under the server’s root.') }),
  // Binding the program (once, before checking starts) is the one stretch the compiler gives no token to.
  cancelWithinMs: 500,
  examples: [{ dir: 'src/state' }],
  stages: [
    function typecheck({ dir }: { dir: string }, ctx: StageContext) {
      const files = sources(inRoot(dir, ctx.settings));
      const options: ts.CompilerOptions = {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        skipLibCheck: true,
        types: [],
      };
      const host = ts.createCompilerHost(options);
      const read = host.getSourceFile.bind(host);
      host.getSourceFile = (...args) => {
        ctx.checkpoint(); // parsing has no token: check before each file
        return read(...args);
      };
      const token: ts.CancellationToken = {
        isCancellationRequested: () => ctx.stopped,
        throwIfCancellationRequested: () => {
          // The compiler catches its own exception type, which is not an Error.
          // eslint-disable-next-line @typescript-eslint/only-throw-error
          if (ctx.stopped) throw new ts.OperationCanceledException();
        },
      };
      const program = ts.createProgram(files, options, host);
      ctx.progress(0, files.length, 'checking');
      let diagnostics: readonly ts.Diagnostic[];
      try {
        diagnostics = [
          ...program.getSyntacticDiagnostics(undefined, token),
          ...program.getSemanticDiagnostics(undefined, token),
        ];
      } catch (error) {
        if (error instanceof ts.OperationCanceledException) ctx.checkpoint(); // throws: the call was stopped
        throw error;
      }
      return {
        files: files.length,
        diagnostics: diagnostics.slice(0, 100).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
        count: diagnostics.length,
      };
    },
  ],
});
