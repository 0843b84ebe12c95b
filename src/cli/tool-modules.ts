/**
 * Checks a `--tools` module before the pool starts, so the usual mistakes end
 * in one line that names the file and the fix instead of a loader stack trace.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { toolsOfModule } from '../stages/tool.js';
import { UsageError } from './usage-error.js';
import { dependencySpec, packageRoot } from './package-source.js';

const version = () =>
  (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;

const GUIDE = 'see docs/tools.md "Writing your own tools"';
// Node's CommonJS loader records every module it ran here, also those reached through import().
const commonJsCache = createRequire(import.meta.url).cache;

function commonJs(file: string): UsageError {
  return new UsageError(
    `--tools ${file}: this is a CommonJS module; tools modules must be ES modules: compile with "module": "nodenext" and put "type": "module" in the tools project's package.json (${GUIDE})`,
  );
}

/** Throws a {@link UsageError} unless `file` (an absolute path) is an ES module that exports tools. */
export async function checkToolModule(file: string): Promise<void> {
  let isFile: boolean;
  try {
    isFile = statSync(file).isFile();
  } catch {
    throw new UsageError(`--tools ${file}: no such file (a relative path is resolved from the current directory)`);
  }
  if (!isFile) throw new UsageError(`--tools ${file}: not a file; pass the compiled .js module`);
  if (/\.[cm]?tsx?$/.test(file))
    throw new UsageError(`--tools ${file}: this is TypeScript; compile it (tsc) and pass the .js file (${GUIDE})`);
  const real = realpathSync(file);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(real).href)) as Record<string, unknown>;
  } catch (error) {
    throw explainLoadError(file, real, error);
  }
  if (commonJsCache[real]) throw commonJs(file);
  try {
    toolsOfModule(mod, file);
  } catch (error) {
    throw new UsageError(`--tools ${error instanceof Error ? error.message : String(error)}`);
  }
}

function explainLoadError(file: string, real: string, error: unknown): UsageError {
  const e = error as { code?: string; message?: string; requireStack?: string[] };
  const message = (e.message ?? String(error)).split('\n')[0]!;
  // A require() that failed inside the module itself: it is CommonJS (and `mcp-cancel-pool` is ESM-only).
  if (e.code === 'ERR_REQUIRE_ESM' || (e.code === 'MODULE_NOT_FOUND' && e.requireStack?.[0] === real))
    return commonJs(file);
  if (e.code === 'ERR_MODULE_NOT_FOUND' && /Cannot find package 'mcp-cancel-pool'/.test(message)) {
    return new UsageError(
      `--tools ${file}: it imports mcp-cancel-pool, which is not installed in its own project: run "npm install ${dependencySpec(version()).install}" there (a global install is not visible to it; ${GUIDE})`,
    );
  }
  // A syntax error carries no location in its stack; node --check prints it (only on this failure path).
  if (error instanceof SyntaxError)
    return new UsageError(
      `--tools ${syntaxLocation(real) ?? file}: ${message} (fix the module, or pass its compiled .js)`,
    );
  // An error in the user's own code: keep where it happened, the one frame that helps.
  const url = pathToFileURL(real).href;
  const frame = (e as { stack?: string }).stack?.split('\n').find((l) => l.includes(url) || l.includes(real));
  const where = frame ? ` (${frame.trim().replace(/^at /, '')})` : '';
  return new UsageError(`--tools ${file}: cannot load it: ${message}${where}`);
}

/** `file:line:col` of the syntax error in `file`, from `node --check`'s report (path:line, the source line, a caret). */
function syntaxLocation(file: string): string | undefined {
  try {
    execFileSync(process.execPath, ['--check', file], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 });
    return undefined;
  } catch (error) {
    const lines = String((error as { stderr?: Buffer }).stderr ?? '').split('\n');
    const m = /^(.*):(\d+)$/.exec(lines[0] ?? '');
    if (!m) return undefined;
    const caret = lines[2]?.indexOf('^') ?? -1;
    return `${m[1]}:${m[2]}:${caret >= 0 ? caret + 1 : 1}`;
  }
}
