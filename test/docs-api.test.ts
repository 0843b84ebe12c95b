/**
 * The API reference (`npm run docs`): TypeDoc builds it from every package
 * entry point with the repository's typedoc.json, and that configuration turns
 * an exported name without a TSDoc comment, or any other warning, into a
 * failure, so CI stops on one. The build case writes the real site and reads
 * it as a user meets it: the README is the landing page, the modules are the
 * import paths, `createToolPool`, `defineTool` and `CancelAwareClient` are
 * links on the landing page, and zod's re-exported `z` has no pages of its own
 * (it had 1,462 of 1,652), and the user docs are pages of it. The last case proves the rule bites: the same
 * settings on a module with one undocumented export fail and name it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
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

/** Runs TypeDoc (writing nothing unless `out` names a directory); resolves with its exit code and output (colour off). */
function typedoc(args: string[], cwd: string, out?: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [TYPEDOC, ...args, ...(out === undefined ? ['--emit', 'none'] : ['--out', out])],
      { cwd, env: { ...process.env, NO_COLOR: '1' }, timeout: 240_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        // eslint-disable-next-line no-control-regex -- stripping ANSI colour codes is the point
        resolve({ code, out: (stdout + stderr).replace(/\x1b\[[0-9;]*m/g, '') });
      },
    );
  });
}

/** The site's HTML pages, as paths relative to its root. */
function htmlPages(root: string, dir = ''): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const rel = dir === '' ? name : `${dir}/${name}`;
    if (statSync(join(root, rel)).isDirectory()) return htmlPages(root, rel);
    return name.endsWith('.html') ? [rel] : [];
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

  it('builds with no warning, opens on the README, names modules by import path and has no zod pages', async () => {
    expect(CONFIG.treatWarningsAsErrors).toBe(true);
    const site = mkdtempSync(join(tmpdir(), 'api-site-'));
    dirs.push(site);
    const r = await typedoc([], ROOT, site);
    expect(r.out).not.toMatch(/warning|error/i);
    expect(r.code, r.out).toBe(0);

    const pages = htmlPages(site);
    // The import paths of package.json's typed exports, each one module page (TypeDoc writes `/` as `_`).
    const importPaths = Object.entries(manifest.exports)
      .filter(([, e]) => e.types !== undefined)
      .map(([path]) => (path === '.' ? 'mcp-cancel-pool' : `mcp-cancel-pool/${path.slice(2)}`));
    const moduleFile = (path: string) => path.replace(/\//g, '_');
    expect(pages.filter((p) => p.startsWith('modules/')).sort()).toEqual(
      importPaths.map((p) => `modules/${moduleFile(p)}.html`).sort(),
    );
    // Every other page is one export of one entry (`functions/mcp-cancel-pool_tools.defineTool.html`): a namespace's
    // members, which is what zod's `z` made, would be `<module>.z.<name>.html`.
    const member = new RegExp(`^\\w+/(${importPaths.map(moduleFile).join('|')})\\.[A-Za-z_$][\\w$]*\\.html$`);
    const strays = pages.filter(
      (p) => p.includes('/') && !p.startsWith('modules/') && !p.startsWith('documents/') && !member.test(p),
    );
    expect(strays).toEqual([]);
    expect(pages.filter((p) => /zod/i.test(p) || /\.z\./.test(p))).toEqual([]);

    // The user docs are pages of the site (not raw Markdown under media/): docs/*.md and the top-level guides.
    const guides = [
      ...readdirSync(join(ROOT, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs_${f}`),
      'PROBE.md',
      'BENCHMARKS.md',
      'CONTRIBUTING.md',
      'CHANGELOG.md',
    ];
    expect(pages.filter((p) => p.startsWith('documents/')).sort()).toEqual(
      guides.map((g) => `documents/${g.replace(/\.md$/, '.html')}`).sort(),
    );

    // The landing page is the README, with the three first names and every entry one click away, and its links to
    // the docs lead to their pages.
    const index = readFileSync(join(site, 'index.html'), 'utf8');
    expect(index).toContain('A tool in ten lines');
    expect(index).toContain('href="documents/docs_guarantees.html"');
    expect(index).not.toMatch(/href="media\/[^"]+\.md"/);
    const links = new Map(
      [...index.matchAll(/<a href="([^"#]+)"[^>]*><code>([^<]+)<\/code><\/a>/g)].map((m) => [m[2], m[1]]),
    );
    expect(links.get('createToolPool')).toBe('functions/mcp-cancel-pool.createToolPool.html');
    expect(links.get('defineTool')).toBe('functions/mcp-cancel-pool_tools.defineTool.html');
    expect(links.get('CancelAwareClient')).toBe('variables/mcp-cancel-pool_client.CancelAwareClient.html');
    for (const path of importPaths) expect(links.get(path)).toBe(`modules/${moduleFile(path)}.html`);
    for (const target of links.values()) expect(pages).toContain(target);
    // `z` is linked to zod's own reference from the tools entry, not documented again.
    expect(readFileSync(join(site, 'modules/mcp-cancel-pool_tools.html'), 'utf8')).toContain('https://zod.dev/api');
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
      // The landing page, its plugin and the guides are the repository's, not this module's.
      JSON.stringify({
        ...CONFIG,
        entryPoints: ['entry.ts'],
        tsconfig: 'tsconfig.json',
        readme: 'none',
        plugin: [],
        projectDocuments: [],
      }),
    );
    const r = await typedoc([], dir);
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/undocumentedThing \(\w+\).*does not have any documentation/);
    expect(r.out).not.toMatch(/documented \(Variable\)/);
  }, 240_000);
});
