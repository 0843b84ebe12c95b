/**
 * Checks a `--tools` module before the pool starts, so the usual mistakes end
 * in one line that names the file and the fix instead of a loader stack trace.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
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
  if (!isFile) throw new UsageError(`--tools ${file}: not a file; pass the module's file`);
  // Node strips types from .ts and .mts (22.18 and newer); JSX it does not compile, and .cts is CommonJS.
  if (/\.[cm]?tsx$/.test(file))
    throw new UsageError(
      `--tools ${file}: Node does not compile JSX; compile it (tsc) and pass the .js file (${GUIDE})`,
    );
  if (/\.cts$/.test(file)) throw commonJs(file);
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
  const typescript = explainTypeScript(file, e, message);
  if (typescript) return typescript;
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

/**
 * What Node refuses in a TypeScript module, in one line each: syntax that needs more than erasing types (`enum`,
 * `namespace`, parameter properties), a `.ts` file under node_modules, and tsc's habit of importing `./x.js` for
 * `./x.ts` (Node runs the files as written, so nothing named `x.js` exists).
 */
function explainTypeScript(
  file: string,
  e: { code?: string; stack?: string },
  message: string,
): UsageError | undefined {
  if (e.code === 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX') {
    // The stack starts with `path:line`, the source (the line before it too, at times) and carets under the construct.
    const lines = (e.stack ?? '').split('\n');
    const at = /^(.*):(\d+)$/.exec(lines[0] ?? '');
    const caret = lines.find((l) => /^\s*\^+\s*$/.test(l))?.indexOf('^') ?? -1;
    const path = at?.[1]?.startsWith('file:') ? fileURLToPath(at[1]) : at?.[1];
    const where = at ? `${path}:${at[2]}:${caret >= 0 ? caret + 1 : 1}` : file;
    return new UsageError(
      `--tools ${file}: ${where}: ${message}; Node runs TypeScript by erasing its types only: write it without enum, namespace or parameter properties ("erasableSyntaxOnly" in tsconfig.json finds them), or compile it with tsc and pass the .js (${GUIDE})`,
    );
  }
  if (e.code === 'ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING') {
    const path = /for "(.*)"$/.exec(message)?.[1] ?? 'a .ts file';
    return new UsageError(
      `--tools ${file}: it loads ${path}, TypeScript under node_modules, which Node does not run: a package must ship compiled .js (${GUIDE})`,
    );
  }
  if (e.code === 'ERR_MODULE_NOT_FOUND') {
    const m = /^Cannot find module '(.*)\.([cm]?)js' imported from (.*)$/.exec(message);
    if (m && /\.[cm]?ts$/.test(m[3]!)) {
      const wanted = `${m[1]}.${m[2]}ts`;
      const importer = m[3]!.startsWith('file:') ? fileURLToPath(m[3]!) : m[3]!;
      if (existsSync(wanted))
        return new UsageError(
          `--tools ${file}: ${importer} imports ${m[1]}.${m[2]}js, but the file is ${wanted}: Node runs TypeScript as written, so import it by its .${m[2]}ts name ("allowImportingTsExtensions" in tsconfig.json) (${GUIDE})`,
        );
    }
  }
  if (e.code === 'ERR_UNKNOWN_FILE_EXTENSION' && /"\.[cm]?ts"/.test(message))
    return new UsageError(
      `--tools ${file}: Node ${process.version} does not run TypeScript; use Node 22.18 or newer, or compile it with tsc and pass the .js (${GUIDE})`,
    );
  return undefined;
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
