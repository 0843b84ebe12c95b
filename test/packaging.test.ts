/**
 * The package as a user gets it: `npm pack` of a clean checkout (no dist/),
 * and the tools project `init-tools` writes, installed from that tarball,
 * compiled with its own tsc and served to a real SDK client.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lines, ROOT, run } from './cli-helpers.js';

interface Packed {
  filename: string;
  files: { path: string }[];
}

const work = mkdtempSync(join(tmpdir(), 'mcp-pack-'));
const checkout = join(work, 'checkout');
let packed: Packed;
let shipped: Set<string>;

beforeAll(async () => {
  // What a fresh clone holds: the tracked and new files, no dist/ and no node_modules/ (linked, for tsc).
  const listed = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard']);
  expect(listed.code).toBe(0);
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    if (!existsSync(join(ROOT, file))) continue; // deleted in the work tree
    mkdirSync(dirname(join(checkout, file)), { recursive: true });
    copyFileSync(join(ROOT, file), join(checkout, file));
  }
  expect(existsSync(join(checkout, 'dist'))).toBe(false);
  symlinkSync(join(ROOT, 'node_modules'), join(checkout, 'node_modules'), 'dir');
  const pack = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: checkout, ms: 400_000 }); // tsc of the whole project: minutes on a loaded machine
  expect(pack.code, pack.stderr).toBe(0);
  packed = (JSON.parse(pack.stdout) as Packed[])[0]!;
  shipped = new Set(packed.files.map((f) => f.path));
}, 450_000);

afterAll(() => rmSync(work, { recursive: true, force: true }), 180_000); // several node_modules trees: slow to delete on a loaded machine

describe('npm pack of a clean checkout', () => {
  it('builds and ships dist/src and dist/workers, and every entry point the manifest names', () => {
    for (const file of ['dist/src/cli/main.js', 'dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/tools.js', 'dist/src/client/index.js', 'dist/workers/runtime.js', 'dist/workers/tools/index.js']) {
      expect(shipped, file).toContain(file);
    }
    const manifest = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
      exports: Record<string, Record<string, string>>;
    };
    const targets = [...Object.values(manifest.bin), ...Object.values(manifest.exports).flatMap((e) => Object.values(e))];
    for (const target of targets) expect(shipped, target).toContain(posix.normalize(target));
    expect([...shipped].filter((f) => f.startsWith('dist/bench/') || f.startsWith('dist/test/'))).toEqual([]);
  });

  it('ships a LICENSE that matches the manifest, and names the repository', () => {
    expect(shipped).toContain('LICENSE');
    const license = readFileSync(join(checkout, 'LICENSE'), 'utf8');
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) 2026 the mcp-cancel-pool authors\n/);
    const manifest = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as { license: string; repository?: { url: string } };
    expect(manifest.license).toBe('MIT');
    expect(manifest.repository?.url).toBe('git+https://github.com/mcp-cancel-pool/mcp-cancel-pool.git');
  });

  it('ships source maps whose sources are in the package (inline)', () => {
    const maps = [...shipped].filter((f) => f.endsWith('.js.map'));
    expect(maps.length).toBeGreaterThan(10);
    const unresolved: string[] = [];
    for (const map of maps) {
      const m = JSON.parse(readFileSync(join(checkout, map), 'utf8')) as { sources: string[]; sourcesContent?: (string | null)[] };
      m.sources.forEach((source, i) => {
        const inline = typeof m.sourcesContent?.[i] === 'string';
        if (!inline && !shipped.has(posix.join(posix.dirname(map), source))) unresolved.push(`${map} -> ${source}`);
      });
    }
    expect(unresolved).toEqual([]);
  });

  it('ships the tools-project template and the cancel demo', () => {
    for (const file of ['templates/tools-project/package.json', 'templates/tools-project/tsconfig.json', 'templates/tools-project/src/my-tools.ts', 'templates/tools-project/test/my-tools.test.ts', 'examples/cancel-demo.mjs']) {
      expect(shipped, file).toContain(file);
    }
  });
});

describe('init-tools', () => {
  it('writes a project that installs from the tarball, compiles with its own tsc and serves its tool', async () => {
    const cli = join(checkout, 'dist/src/cli/main.js');
    const project = join(work, 'my-tools');
    const init = await run(process.execPath, [cli, 'init-tools', project]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toBe('');
    const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { name: string; type: string; dependencies: Record<string, string> };
    // Run from a checkout, it depends on that checkout (the package is not on the registry).
    expect(manifest).toMatchObject({ name: 'my-tools', type: 'module', dependencies: { 'mcp-cancel-pool': `file:${realpathSync(checkout)}` } });

    // The package itself from the local tarball; its dependencies from npm's cache.
    const install = await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(work, packed.filename)], { cwd: project, ms: 180_000 });
    expect(install.code, install.stderr).toBe(0);
    const test = await run('npm', ['test'], { cwd: project, ms: 120_000 });
    expect(test.code, test.stdout + test.stderr).toBe(0);
    expect(test.stdout).toMatch(/^# pass 1$/m);
    expect(test.stdout).toMatch(/^# fail 0$/m);

    // And what the README says to run, from a real SDK client: the installed CLI, the compiled module.
    const client = new Client({ name: 'packaging-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [join(project, 'node_modules/mcp-cancel-pool/dist/src/cli/main.js'), 'serve', '--threads', '1', '--tools', join(project, 'dist/src/my-tools.js')],
        cwd: project,
        stderr: 'pipe',
      }),
    );
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('word_stats');
      const result = await client.callTool({ name: 'word_stats', arguments: { text: 'b a b c b a', top: 2 } });
      expect(result.content).toEqual([{ type: 'text', text: 'b: 3\na: 2' }]);
    } finally {
      await client.close();
    }
  }, 300_000);

  it('from a tarball in an empty directory, with no registry copy: init-tools, npm install, npm test pass', async () => {
    const user = join(work, 'first-use');
    mkdirSync(user);
    const tarball = join(work, packed.filename);
    // What the README's Install step does with a tarball, into a project of its own (its dependencies from npm's cache).
    const install = await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], { cwd: user, ms: 180_000 });
    expect(install.code, install.stderr).toBe(0);
    const init = await run(join(user, 'node_modules/.bin/mcp-cancel-pool'), ['init-tools', 'tools'], { cwd: user });
    expect(init.code, init.stderr).toBe(0);
    expect(init.stderr).toContain(`it depends on mcp-cancel-pool file:${tarball}`);
    const manifest = JSON.parse(readFileSync(join(user, 'tools/package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(manifest.dependencies['mcp-cancel-pool']).toBe(`file:${tarball}`);
    // The project's own plain npm install finds mcp-cancel-pool where it came from, not on the registry.
    const own = await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: join(user, 'tools'), ms: 180_000 });
    expect(own.code, own.stderr).toBe(0);
    expect(own.stderr).not.toMatch(/E404/);
    const test = await run('npm', ['test'], { cwd: join(user, 'tools'), ms: 120_000 });
    expect(test.code, test.stdout + test.stderr).toBe(0);
    expect(test.stdout).toMatch(/^# pass 1$/m);
  }, 400_000);

  it('npm publish --dry-run is clean: no manifest fix-ups, no warnings but the login one', async () => {
    const r = await run('npm', ['publish', '--dry-run', '--ignore-scripts'], { cwd: checkout, ms: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    const warnings = lines(r.stderr).filter((l) => /npm warn/i.test(l) && !/requires you to be logged in/.test(l));
    expect(warnings).toEqual([]);
    expect(r.stderr).toMatch(/npm notice name: +mcp-cancel-pool/);
  }, 150_000);

  it('refuses a non-empty directory and writes nothing', async () => {
    const target = join(work, 'occupied');
    mkdirSync(target);
    writeFileSync(join(target, 'notes.txt'), 'mine\n');
    const r = await run(process.execPath, [join(checkout, 'dist/src/cli/main.js'), 'init-tools', target]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(lines(r.stderr)).toEqual([`[mcp-cancel-pool] init-tools: ${target} is not empty; give a new or empty directory (nothing was written)`]);
    expect(readdirSync(target)).toEqual(['notes.txt']);
  });
});
