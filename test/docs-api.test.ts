/**
 * The API reference (`npm run docs`): TypeDoc builds it from every package
 * entry point with the repository's typedoc.json, and that configuration turns
 * an exported name without a TSDoc comment into a failure, so CI stops on one.
 * The second case proves the rule bites: the same settings on a module with
 * one undocumented export fail and name it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TYPEDOC = join(ROOT, 'node_modules/typedoc/bin/typedoc');
const CONFIG = JSON.parse(readFileSync(join(ROOT, 'typedoc.json'), 'utf8')) as { entryPoints: string[] } & Record<
  string,
  unknown
>;
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  exports: Record<string, { types?: string }>;
  scripts: Record<string, string>;
};

/** Runs TypeDoc without writing anything; resolves with its exit code and output (colour off). */
function typedoc(args: string[], cwd: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [TYPEDOC, ...args, '--emit', 'none'],
      { cwd, env: { ...process.env, NO_COLOR: '1' }, timeout: 240_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        // eslint-disable-next-line no-control-regex -- stripping ANSI colour codes is the point
        resolve({ code, out: (stdout + stderr).replace(/\x1b\[[0-9;]*m/g, '') });
      },
    );
  });
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('API reference', () => {
  it('documents every entry point of the package (each typed export is a TypeDoc entry point), and npm run docs builds it', () => {
    const typed = Object.values(manifest.exports).flatMap((e) => (e.types === undefined ? [] : [e.types]));
    const sources = typed.map((t) => t.replace(/^\.\/dist\//, '').replace(/\.d\.ts$/, '.ts'));
    expect(sources.length).toBeGreaterThan(0);
    expect([...CONFIG.entryPoints].sort()).toEqual([...sources].sort());
    expect(manifest.scripts.docs).toBe('typedoc');
    expect(CONFIG.out).toBe('docs/api');
    expect(readFileSync(join(ROOT, '.gitignore'), 'utf8').split('\n')).toContain('docs/api/');
  });

  it('builds with no exported name lacking a comment (and no other warning)', async () => {
    const r = await typedoc([], ROOT);
    expect(r.out).not.toMatch(/warning|error/i);
    expect(r.code, r.out).toBe(0);
  }, 240_000);

  it('the same settings fail on an undocumented export, naming it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'typedoc-'));
    dirs.push(dir);
    writeFileSync(
      join(dir, 'entry.ts'),
      '/** Documented. */\nexport const documented = 1;\nexport function undocumentedThing(): number {\n  return 2;\n}\n',
    );
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { strict: true, module: 'nodenext', target: 'es2022' }, files: ['entry.ts'] }),
    );
    writeFileSync(
      join(dir, 'typedoc.json'),
      JSON.stringify({ ...CONFIG, entryPoints: ['entry.ts'], tsconfig: 'tsconfig.json' }),
    );
    const r = await typedoc([], dir);
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/undocumentedThing \(\w+\).*does not have any documentation/);
    expect(r.out).not.toMatch(/documented \(Variable\)/);
  }, 240_000);
});
