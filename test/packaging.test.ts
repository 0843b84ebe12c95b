/**
 * The package as a user gets it: `npm pack` of a clean checkout (no dist/),
 * and every install path of the README from that one tarball: into an empty
 * project (the install budget, the optional peers' one-line messages, one SDK
 * core for an embedder), globally from the clone and from the tarball, and
 * the tools project `init-tools` writes after each, installed, compiled with
 * its own tsc and served to a real SDK client. npm runs with a cache and a
 * global prefix of this run's own (never the machine's), shared by every
 * install here: the registry is fetched from once per run.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lines, ROOT, run } from './cli-helpers.js';
import { readFigures, recordFigures, recording, TARBALL_TOLERANCE } from './doc-figures.js';

interface Packed {
  filename: string;
  /** Bytes of the .tgz. */
  size: number;
  files: { path: string }[];
}

const work = mkdtempSync(join(tmpdir(), 'mcp-pack-'));
const checkout = join(work, 'checkout');
/** This run's npm cache and global prefix. */
const NPM_ENV = {
  npm_config_cache: join(work, 'npm-cache'),
  npm_config_prefix: join(work, 'prefix'),
  npm_config_update_notifier: 'false',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
};
/** npm with this run's cache and prefix. */
const npm = (args: string[], cwd: string, ms = 180_000, env: Record<string, string> = {}) =>
  run('npm', args, { cwd, ms, env: { ...NPM_ENV, ...env } });
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
  expect(existsSync(join(checkout, 'dist-dev'))).toBe(false);
  symlinkSync(join(ROOT, 'node_modules'), join(checkout, 'node_modules'), 'dir');
  const pack = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: checkout, ms: 400_000 }); // tsc of the whole project: minutes on a loaded machine
  expect(pack.code, pack.stderr).toBe(0);
  packed = (JSON.parse(pack.stdout) as Packed[])[0]!;
  shipped = new Set(packed.files.map((f) => f.path));
}, 450_000);

afterAll(() => rmSync(work, { recursive: true, force: true }), 180_000); // several node_modules trees: slow to delete on a loaded machine

describe('npm pack of a clean checkout', () => {
  it('builds and ships dist/src and dist/workers, and every entry point the manifest names', () => {
    for (const file of [
      'dist/src/cli/main.js',
      'dist/src/index.js',
      'dist/src/index.d.ts',
      'dist/src/tools.js',
      'dist/src/client/index.js',
      'dist/workers/runtime.js',
      'dist/workers/tools/index.js',
    ]) {
      expect(shipped, file).toContain(file);
    }
    const manifest = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
      exports: Record<string, Record<string, string>>;
    };
    const targets = [
      ...Object.values(manifest.bin),
      ...Object.values(manifest.exports).flatMap((e) => Object.values(e)),
    ];
    for (const target of targets) expect(shipped, target).toContain(posix.normalize(target));
  });

  it('ships a LICENSE that matches the manifest, and names the repository', () => {
    expect(shipped).toContain('LICENSE');
    const license = readFileSync(join(checkout, 'LICENSE'), 'utf8');
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) 2026 the mcp-cancel-pool authors\n/);
    const manifest = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as {
      license: string;
      repository?: { url: string };
    };
    expect(manifest.license).toBe('MIT');
    expect(manifest.repository?.url).toBe('git+https://github.com/mcp-cancel-pool/mcp-cancel-pool.git');
  });

  it('ships no source maps, JS without comments, declarations with their TSDoc, and no benchmark or test output', () => {
    // Maps whose sources are not shipped point nowhere, and inlined sources doubled the package: none at all.
    expect([...shipped].filter((f) => f.endsWith('.map'))).toEqual([]);
    expect([...shipped].filter((f) => /^(dist-dev|bench|test)\//.test(f) || /^dist\/(bench|test)\//.test(f))).toEqual(
      [],
    );
    const js = [...shipped].filter((f) => f.endsWith('.js') && f.startsWith('dist/'));
    const commented = js.filter((f) => /^\s*(\/\*\*|\/\/ )/m.test(readFileSync(join(checkout, f), 'utf8')));
    expect(commented).toEqual([]);
    expect(readFileSync(join(checkout, 'dist/src/index.d.ts'), 'utf8')).toMatch(/\/\*\*[^]*mcp-cancel-pool/);
    expect(readFileSync(join(checkout, 'dist/src/executor/executor.d.ts'), 'utf8')).toMatch(/\/\*\*/);
    // Only the declarations the entry points' types reach are shipped (scripts/prune-declarations.mjs), and every
    // one they import is there.
    const declarations = [...shipped].filter((f) => f.endsWith('.d.ts'));
    for (const file of declarations) {
      for (const m of readFileSync(join(checkout, file), 'utf8').matchAll(
        /(?:\bfrom\s+|\bimport\s*\(\s*)["'](\.{1,2}\/[^"']+)["']/g,
      )) {
        expect(shipped, `${file} imports ${m[1]}`).toContain(
          posix.normalize(posix.join(posix.dirname(file), m[1]!.replace(/\.js$/, '.d.ts'))),
        );
      }
    }
    expect(declarations).not.toContain('dist/src/probe/types.d.ts');
  });

  it('is at most 440 KB packed, with the docs the README links', () => {
    // 366,923 B before round 5's child processes, checkpoint gaps, hostile-client bounds and example tools; 409,825 B
    // with them (npm pack --dry-run at 887e3c0). The bound keeps the next growth a deliberate one.
    expect(packed.size).toBeLessThanOrEqual(440 * 1024);
    // The size the docs quote (docs/figures.json), within a doc edit's drift of this one.
    if (recording) recordFigures({ tarballBytes: packed.size });
    const recorded = readFigures().tarballBytes;
    expect(
      Math.abs(packed.size - recorded) / recorded,
      `${packed.size} B packed, docs/figures.json says ${recorded}: FIGURES=write records this run`,
    ).toBeLessThanOrEqual(TARBALL_TOLERANCE);
    const readme = readFileSync(join(checkout, 'README.md'), 'utf8');
    // Every Markdown file the README links to by a relative path (the source files it links are in the repository).
    const docs = [...readme.matchAll(/\]\(([^)#:]+\.md)(?:#[^)]*)?\)/g)].map((m) => posix.normalize(m[1]!));
    expect(docs).toContain('BENCHMARKS.md');
    for (const doc of new Set([...docs, 'PROBE.md', 'README.md', 'LICENSE'])) expect(shipped, doc).toContain(doc);
  });

  it('publishes no install-time script: it builds on prepack, and npm test builds before it runs', () => {
    const manifest = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    for (const hook of ['prepare', 'preinstall', 'install', 'postinstall'])
      expect(manifest.scripts, hook).not.toHaveProperty(hook);
    expect(manifest.scripts.prepack).toMatch(/npm run build/);
    expect(manifest.scripts.test).toMatch(/^npm run build && /);
    // CI's clean install is followed by the build (npm ci runs no build of its own any more).
    expect(readFileSync(join(checkout, '.ci/run'), 'utf8')).toMatch(/^npm ci [^\n]*\n(#[^\n]*\n)*npm run build$/m);
  });

  it('ships the tools-project template and the cancel demo', () => {
    for (const file of [
      'templates/tools-project/package.json',
      'templates/tools-project/tsconfig.json',
      'templates/tools-project/src/my-tools.ts',
      'templates/tools-project/test/my-tools.test.ts',
      'examples/cancel-demo.mjs',
    ]) {
      expect(shipped, file).toContain(file);
    }
  });
});

describe('init-tools', () => {
  it('writes a project that installs from the tarball, type-checks with its own tsc and serves its TypeScript tool as written', async () => {
    const cli = join(checkout, 'dist/src/cli/main.js');
    const project = join(work, 'my-tools');
    const init = await run(process.execPath, [cli, 'init-tools', project]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toBe('');
    const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as {
      name: string;
      type: string;
      dependencies: Record<string, string>;
    };
    // Run from a checkout, it depends on that checkout (the package is not on the registry).
    expect(manifest).toMatchObject({
      name: 'my-tools',
      type: 'module',
      dependencies: { 'mcp-cancel-pool': `file:${realpathSync(checkout)}` },
    });

    // The package itself from the local tarball; its dependencies from npm's cache.
    const install = await npm(['install', '--prefer-offline', join(work, packed.filename)], project);
    expect(install.code, install.stderr).toBe(0);
    const test = await npm(['test'], project, 120_000);
    expect(test.code, test.stdout + test.stderr).toBe(0);
    // node --test's summary: TAP lines (`# pass 1`) up to Node 22, the spec reporter's (`ℹ pass 1`) on a pipe since 24.
    expect(test.stdout).toMatch(/^(#|ℹ) pass 2$/m);
    expect(test.stdout).toMatch(/^(#|ℹ) fail 0$/m);

    // And what the README says to run, from a real SDK client: the installed CLI, the module as written (no build).
    const client = new Client({ name: 'packaging-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [
          join(project, 'node_modules/mcp-cancel-pool/dist/src/cli/main.js'),
          'serve',
          '--threads',
          '1',
          '--tools',
          join(project, 'src/my-tools.ts'),
        ],
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
    const install = await npm(['install', '--prefer-offline', tarball], user);
    expect(install.code, install.stderr).toBe(0);
    const init = await run(join(user, 'node_modules/.bin/mcp-cancel-pool'), ['init-tools', 'tools'], { cwd: user });
    expect(init.code, init.stderr).toBe(0);
    expect(init.stderr).toContain(`it depends on mcp-cancel-pool file:${tarball}`);
    const manifest = JSON.parse(readFileSync(join(user, 'tools/package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(manifest.dependencies['mcp-cancel-pool']).toBe(`file:${tarball}`);
    // The project's own plain npm install finds mcp-cancel-pool where it came from, not on the registry.
    const own = await npm(['install', '--prefer-offline'], join(user, 'tools'));
    expect(own.code, own.stderr).toBe(0);
    expect(own.stderr).not.toMatch(/E404/);
    const test = await npm(['test'], join(user, 'tools'), 120_000);
    expect(test.code, test.stdout + test.stderr).toBe(0);
    expect(test.stdout).toMatch(/^(#|ℹ) pass 2$/m);
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
    expect(lines(r.stderr)).toEqual([
      `[mcp-cancel-pool] init-tools: ${target} is not empty; give a new or empty directory (nothing was written)`,
    ]);
    expect(readdirSync(target)).toEqual(['notes.txt']);
  });
});

/** A real SDK client on `command args` over stdio: the tool names, and one spin call's text. */
async function servedOverStdio(
  command: string,
  args: string[],
  cwd: string,
): Promise<{ tools: string[]; spin: unknown }> {
  const client = new Client({ name: 'packaging-test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command,
      args,
      cwd,
      stderr: 'pipe',
      env: { ...(process.env as Record<string, string>), ...NPM_ENV },
    }),
  );
  try {
    const tools = (await client.listTools()).tools.map((t) => t.name);
    const spin = (await client.callTool({ name: 'spin', arguments: { ms: 1 } })).content;
    return { tools, spin };
  } finally {
    await client.close();
  }
}

describe('npm install <tarball> into an empty project (the default install)', () => {
  const project = join(work, 'empty');
  const bin = () => join(project, 'node_modules/.bin/mcp-cancel-pool');
  let peers: Record<string, string>;
  beforeAll(async () => {
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'empty', private: true, type: 'module' }));
    const install = await npm(['install', '--prefer-offline', join(work, packed.filename)], project, 300_000);
    expect(install.code, install.stderr).toBe(0);
    peers = (
      JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> }
    ).peerDependencies;
  }, 320_000);

  it('is at most 30 packages and 30 MB (du of node_modules), none of them an optional peer', async () => {
    const lock = JSON.parse(readFileSync(join(project, 'node_modules/.package-lock.json'), 'utf8')) as {
      packages: Record<string, unknown>;
    };
    const packages = Object.keys(lock.packages).filter((k) => k.startsWith('node_modules/'));
    expect(packages.length, packages.join(' ')).toBeLessThanOrEqual(30);
    const du = await run('du', ['-sk', 'node_modules'], { cwd: project });
    const kilobytes = Number(du.stdout.split('\t')[0]);
    expect(kilobytes).toBeLessThanOrEqual(30 * 1024);
    // The figures README.md quotes (docs/figures.json): the same count, the same MB as `du -sm` gives.
    if (recording) recordFigures({ defaultInstall: { packages: packages.length, kilobytes } });
    const recorded = readFigures().defaultInstall;
    const why = `${packages.length} packages, ${kilobytes} kB; docs/figures.json says ${recorded.packages}, ${recorded.kilobytes} kB: FIGURES=write records this run`;
    expect(packages.length, why).toBe(recorded.packages);
    expect(Math.ceil(kilobytes / 1024), why).toBe(Math.ceil(recorded.kilobytes / 1024));
    for (const absent of [
      'express',
      'hono',
      'bullmq',
      'ioredis',
      'vega',
      'vega-lite',
      '@modelcontextprotocol/sdk',
      '@modelcontextprotocol/client',
      '@modelcontextprotocol/node',
    ]) {
      expect(existsSync(join(project, 'node_modules', absent)), absent).toBe(false);
    }
  });

  it('serves over stdio and over Streamable HTTP', async () => {
    expect(await servedOverStdio(bin(), ['serve', '--threads', '1'], project)).toMatchObject({
      tools: expect.arrayContaining(['spin']) as unknown,
      spin: [{ type: 'text' }],
    });
    const server = spawn(bin(), ['serve', '--transport', 'http', '--port', '0', '--threads', '1'], {
      cwd: project,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    try {
      let stderr = '';
      const url = await new Promise<string>((resolve, reject) => {
        server.stderr.on('data', (d: Buffer) => {
          stderr += d.toString();
          const m = /listening on (http:\/\/\S+)/.exec(stderr);
          if (m) resolve(m[1]!);
        });
        server.once('exit', () => reject(new Error(`serve --transport http exited: ${stderr}`)));
      });
      const client = new Client({ name: 'packaging-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      try {
        expect((await client.callTool({ name: 'spin', arguments: { ms: 1 } })).isError).toBeFalsy();
      } finally {
        await client.close();
      }
    } finally {
      server.kill();
    }
  }, 60_000);

  it('each feature on an optional peer stops with one line naming the npm install to run', async () => {
    const install = (...names: string[]) => `npm install ${names.map((n) => `${n}@${peers[n]}`).join(' ')}`;
    const redis = `needs bullmq and ioredis (optional, not installed with mcp-cancel-pool): ${install('bullmq', 'ioredis')}`;
    // Each command's lines carry its own prefix (the worker host's say so).
    const commands: [string[], string][] = [
      [['serve', '--redis', 'redis://127.0.0.1:1'], `[mcp-cancel-pool] serve --redis ${redis}`],
      [['worker', '--redis', 'redis://127.0.0.1:1'], `[mcp-cancel-pool worker] worker ${redis}`],
    ];
    for (const [args, message] of commands) {
      const r = await run(bin(), args, { cwd: project });
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stdout).toBe('');
      expect(lines(r.stderr)).toEqual([message]);
    }
    const imports: [string, string][] = [
      ['mcp-cancel-pool/remote', `mcp-cancel-pool/remote ${redis}`],
      [
        'mcp-cancel-pool/client',
        `mcp-cancel-pool/client needs @modelcontextprotocol/client (optional, not installed with mcp-cancel-pool): ${install('@modelcontextprotocol/client')}`,
      ],
    ];
    for (const [entry, message] of imports) {
      const r = await run(process.execPath, ['--input-type=module', '-e', `await import(${JSON.stringify(entry)})`], {
        cwd: project,
      });
      expect(r.code, entry).toBe(1);
      expect(r.stderr).toContain(`MissingPeerError: ${message}\n`);
    }
    // The entries that need no optional peer load.
    const r = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "for (const e of ['', '/tools', '/server', '/tasks', '/ops']) await import('mcp-cancel-pool' + e)",
      ],
      { cwd: project },
    );
    expect(r.code, r.stderr).toBe(0);
  }, 60_000);

  it('an embedder on its own SDK server gets one @modelcontextprotocol/core (the SDK packages are peers with a range)', async () => {
    const embedder = join(work, 'embedder');
    mkdirSync(embedder);
    writeFileSync(join(embedder, 'package.json'), JSON.stringify({ name: 'embedder', private: true, type: 'module' }));
    const install = await npm(
      [
        'install',
        '--prefer-offline',
        `@modelcontextprotocol/server@${peers['@modelcontextprotocol/server']}`,
        join(work, packed.filename),
      ],
      embedder,
    );
    expect(install.code, install.stderr).toBe(0);
    const ls = await npm(['ls', '@modelcontextprotocol/core', '--all', '--parseable'], embedder, 60_000);
    expect(ls.code, ls.stderr).toBe(0);
    expect(new Set(lines(ls.stdout))).toEqual(new Set([join(embedder, 'node_modules/@modelcontextprotocol/core')]));
  }, 200_000);
});

/** A short probe of our own server (`serve` run by `cli`), in both eras, over stdio. */
const probeArgs = (cli: string[]) => [
  'probe',
  '--stdio',
  [process.execPath, ...cli, 'serve', '--threads', '1'].join(' '),
  '--tool',
  'spin',
  '--args',
  '{"ms":5000}',
  '--quick-tool',
  'spin',
  '--quick-args',
  '{"ms":3}',
  '--samples',
  '2',
  '--cancel-after-ms',
  '150',
  '--settle-ms',
  '600',
  '--quiet-ms',
  '150',
  '--storm',
  '8',
];

describe('the probe with the default install', () => {
  it('writes the text report, the JSON report, and with --out the JSON and Markdown (charts: one line naming their npm install)', async () => {
    const project = join(work, 'empty');
    const cli = join(project, 'node_modules/mcp-cancel-pool/dist/src/cli/main.js');
    const text = await run(process.execPath, [cli, ...probeArgs([cli])], { cwd: project, ms: 120_000 });
    expect(text.code, text.stdout + text.stderr).toBe(0);
    expect(text.stdout).toMatch(/PASS\s+cancel\.no-answer/);
    const out = join(work, 'probe-out');
    const json = await run(
      process.execPath,
      [cli, ...probeArgs([cli]), '--format', 'json', '--no-progress', '--out', out],
      { cwd: project, ms: 120_000 },
    );
    expect(json.code, json.stderr).toBe(0);
    expect((JSON.parse(json.stdout) as { result: string }).result).toBe('pass');
    expect(readdirSync(out).sort()).toEqual(['probe.json', 'report.md']);
    const peers = (
      JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> }
    ).peerDependencies;
    expect(lines(json.stderr)).toContain(
      `[probe] no charts: they need vega and vega-lite (optional, not installed with mcp-cancel-pool): npm install vega@${peers.vega} vega-lite@${peers['vega-lite']}`,
    );
  }, 300_000);
});

describe('global installs, each in a temporary prefix', () => {
  it('from the tarball: the command runs, and init-tools depends on the installed copy (a global prefix keeps no record of the tarball)', async () => {
    const prefix = join(work, 'prefix-tarball');
    const g = await npm(['install', '-g', '--prefer-offline', join(work, packed.filename)], work, 300_000, {
      npm_config_prefix: prefix,
    });
    expect(g.code, g.stderr).toBe(0);
    const bin = join(prefix, 'bin/mcp-cancel-pool');
    expect(await servedOverStdio(bin, ['serve', '--threads', '1'], work)).toMatchObject({
      tools: expect.arrayContaining(['spin']) as unknown,
    });
    const project = join(work, 'global-tools');
    const init = await run(bin, ['init-tools', project]);
    expect(init.code, init.stderr).toBe(0);
    const spec = `file:${realpathSync(join(prefix, 'lib/node_modules/mcp-cancel-pool'))}`;
    expect(
      (JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { dependencies: Record<string, string> })
        .dependencies['mcp-cancel-pool'],
    ).toBe(spec);
    const own = await npm(['install', '--prefer-offline'], project);
    expect(own.code, own.stderr).toBe(0);
    const test = await npm(['test'], project, 120_000);
    expect(test.code, test.stdout + test.stderr).toBe(0);
    expect(test.stdout).toMatch(/^(#|ℹ) pass 2$/m);
  }, 600_000);

  it("from the clone, after the README's build step: npm install -g . links the command to the clone, and init-tools depends on the clone", async () => {
    // The README: npm ci && npm run build, then npm install -g . (the checkout was built by npm pack's prepack).
    expect(existsSync(join(checkout, 'dist/src/cli/main.js'))).toBe(true);
    const prefix = join(work, 'prefix-clone');
    const g = await npm(['install', '-g', '.'], checkout, 120_000, { npm_config_prefix: prefix });
    expect(g.code, g.stderr).toBe(0);
    const bin = join(prefix, 'bin/mcp-cancel-pool');
    const version = await run(bin, ['--version']);
    expect(version.stdout.trim()).toBe('0.1.0');
    const project = join(work, 'clone-tools');
    const init = await run(bin, ['init-tools', project]);
    expect(init.code, init.stderr).toBe(0);
    expect(
      (JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { dependencies: Record<string, string> })
        .dependencies['mcp-cancel-pool'],
    ).toBe(`file:${realpathSync(checkout)}`);
  }, 200_000);
});

describe('npx --package <tarball>, without installing', () => {
  const where = join(work, 'npx');
  it('runs the server from the tarball', async () => {
    mkdirSync(where);
    expect(
      await servedOverStdio(
        'npx',
        [
          '--yes',
          '--prefer-offline',
          '--package',
          join(work, packed.filename),
          'mcp-cancel-pool',
          'serve',
          '--threads',
          '1',
        ],
        where,
      ),
    ).toMatchObject({ tools: expect.arrayContaining(['spin']) as unknown });
  }, 300_000);

  it('runs the probe from the tarball: text and JSON reports', async () => {
    const ours = join(checkout, 'dist/src/cli/main.js');
    const args = [
      '--yes',
      '--prefer-offline',
      '--package',
      join(work, packed.filename),
      'mcp-cancel-pool',
      ...probeArgs([ours]),
    ];
    const text = await run('npx', args, { cwd: where, ms: 200_000, env: NPM_ENV });
    expect(text.code, text.stdout + text.stderr).toBe(0);
    expect(text.stdout).toMatch(/PASS\s+cancel\.work-stops/);
    const json = await run('npx', [...args, '--format', 'json', '--no-progress'], {
      cwd: where,
      ms: 200_000,
      env: NPM_ENV,
    });
    expect(json.code, json.stderr).toBe(0);
    expect((JSON.parse(json.stdout) as { result: string }).result).toBe('pass');
  }, 450_000);
});
