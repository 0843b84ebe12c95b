/**
 * First use of the command line: help that tells the truth, one clear line
 * for a user's mistake, a quick start whose stdout carries only JSON-RPC, and
 * the cancel demo.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { lines, ROOT, run } from './cli-helpers.js';
import { CLI } from './helpers.js';

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
/** The headings of a page of docs/, as the help names them (`docs/serving.md "Command line"`). */
const headingsOf = (page: string) =>
  lines(readFileSync(join(ROOT, page), 'utf8').replace(/^```[^]*?^```/gm, ''))
    .filter((l) => /^#{1,4} /.test(l))
    .map((l) => l.replace(/^#+ /, ''));

describe('help', () => {
  it('top-level --help lists every option of serve', async () => {
    const top = await run(process.execPath, [CLI, '--help']);
    const serve = await run(process.execPath, [CLI, 'serve', '--help']);
    expect(top.code).toBe(0);
    const serveFlags = [...serve.stdout.matchAll(/^\s+(?:-\w, )?(--[a-z-]+)/gm)].map((m) => m[1]);
    expect(serveFlags).toContain('--worker-memory-mb');
    for (const flag of serveFlags) expect(top.stdout, flag).toContain(flag);
  });

  it('names only docs sections that exist, and never the README (which no longer holds them)', async () => {
    const text = [['--help'], ['serve', '--help'], ['worker', '--help']].map(
      async (args) => (await run(process.execPath, [CLI, ...args])).stdout,
    );
    const help = (await Promise.all(text)).join(' ').replace(/\s+/g, ' ');
    const refs = [...help.matchAll(/(docs\/[a-z-]+\.md) "([^"]+)"/g)].map((m) => [m[1]!, m[2]!] as const);
    expect(refs.length).toBeGreaterThan(0);
    for (const [page, heading] of refs) expect(headingsOf(page), `${page} "${heading}"`).toContain(heading);
    expect(help).not.toMatch(/README "/);
  });

  it('--worker-memory-mb says it caps only the V8 heap, in the help and in docs/serving.md', async () => {
    const serve = (await run(process.execPath, [CLI, 'serve', '--help'])).stdout.replace(/\s+/g, ' ');
    expect(serve).toMatch(
      /--worker-memory-mb <n> V8 old-generation heap limit .* Buffers, ArrayBuffers and native memory are not counted/,
    );
    const serving = readFileSync(join(ROOT, 'docs/serving.md'), 'utf8');
    expect(serving.replace(/\s+/g, ' ')).toMatch(
      /--worker-memory-mb <n> +V8 old-generation heap limit[^|]*not counted/,
    );
  });
});

describe('a mistake in --tools prints one clear line and exits non-zero', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-cli-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  // What tsc emits for the README's tools module without "module": "nodenext".
  const commonJsSource = [
    '"use strict";',
    'Object.defineProperty(exports, "__esModule", { value: true });',
    'const tools_1 = require("mcp-cancel-pool/tools");',
    "exports.default = [(0, tools_1.defineTool)({ name: 'cjs_tool', input: tools_1.z.object({}), stages: [() => 'x'] })];",
    '',
  ].join('\n');
  // A CommonJS project that has mcp-cancel-pool installed: the module loads on the main thread, and would not in the workers.
  const installed = join(dir, 'cjs-installed');
  mkdirSync(join(installed, 'node_modules'), { recursive: true });
  symlinkSync(ROOT, join(installed, 'node_modules', 'mcp-cancel-pool'), 'dir');
  writeFileSync(join(installed, 'package.json'), '{ "name": "cjs-installed" }\n');
  writeFileSync(join(installed, 'my-tools.js'), commonJsSource);
  // The same module with nothing installed: its require() fails.
  const bare = join(dir, 'cjs-bare');
  mkdirSync(bare);
  writeFileSync(join(bare, 'package.json'), '{ "name": "cjs-bare" }\n');
  writeFileSync(join(bare, 'my-tools.js'), commonJsSource);
  // An ES module in a project without mcp-cancel-pool (it was installed globally, say).
  const esm = join(dir, 'esm-bare');
  mkdirSync(esm);
  writeFileSync(join(esm, 'package.json'), '{ "name": "esm-bare", "type": "module" }\n');
  writeFileSync(
    join(esm, 'my-tools.js'),
    "import { defineTool, z } from 'mcp-cancel-pool/tools';\nexport default [defineTool({ name: 'e', input: z.object({}), stages: [() => 'x'] })];\n",
  );
  // A bug in the module's own code: the line says where.
  writeFileSync(join(esm, 'broken.js'), 'const x = 1;\nundefinedThing(x);\nexport default [];\n');

  const cases: [string, string, RegExp][] = [
    ['a missing file', join(dir, 'missing.js'), /no such file/],
    [
      'a CommonJS module that loads',
      join(installed, 'my-tools.js'),
      /CommonJS module; tools modules must be ES modules: compile with "module": "nodenext" and put "type": "module"/,
    ],
    [
      'a CommonJS module whose require fails',
      join(bare, 'my-tools.js'),
      /CommonJS module; tools modules must be ES modules/,
    ],
    [
      'an ES module whose project lacks mcp-cancel-pool',
      join(esm, 'my-tools.js'),
      new RegExp(
        `imports mcp-cancel-pool, which is not installed in its own project: run "npm install ${realpathSync(ROOT).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}" there \\(a global install is not visible`,
      ),
    ], // from a checkout: the checkout itself
    [
      'a module that throws while loading',
      join(esm, 'broken.js'),
      /cannot load it: undefinedThing is not defined \(file:\/\/.*broken\.js:2:1\)/,
    ],
  ];
  for (const [what, file, fix] of cases) {
    it(what, async () => {
      const r = await run(process.execPath, [CLI, 'serve', '--tools', file], { ms: 20_000 });
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(lines(r.stderr), r.stderr).toHaveLength(1);
      expect(r.stderr).toContain(file);
      expect(r.stderr).toMatch(fix);
    });
  }
});

describe('quick start', () => {
  it("the README's serve command writes only JSON-RPC to stdout", async () => {
    const block = /## Quick start\s+(?:<!-- not runnable: [^\n]* -->\n)?```sh\n([^`]*)```/.exec(README)?.[1];
    const first = lines(block ?? '')[0]!.replace(/\s+#.*$/, '');
    // The install half (npm ci) is what a fresh clone needs once; the serve half is what a client would spawn.
    expect(first.startsWith('npm ci && ')).toBe(true);
    const command = first.slice('npm ci && '.length);
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !/^npm_(lifecycle|package)_/.test(k) && k !== 'npm_config_loglevel'),
    );
    const child = spawn(command, { cwd: ROOT, shell: true, stdio: 'pipe', env });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const firstLine = new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
    child.stdin.write(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'quick-start', version: '1' } },
      }) + '\n',
    );
    const line = await Promise.race([firstLine, exited.then(() => `exited early: ${stderr}`)]);
    child.stdin.end();
    expect(await exited).toBe(0);
    expect(() => JSON.parse(line), `first stdout line: ${JSON.stringify(line)}`).not.toThrow();
    expect(JSON.parse(line)).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      result: { serverInfo: { name: 'mcp-cancel-pool' } },
    });
  }, 90_000);
});

describe('cancel demo', () => {
  it('examples/cancel-demo.mjs cancels a long call and shows the work stopped with its thread kept', async () => {
    const r = await run(process.execPath, [join(ROOT, 'examples/cancel-demo.mjs'), '1'], { ms: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    const out = lines(r.stdout);
    expect(out).toContain('[demo] calling spin for 600 s of CPU; cancelling after 1 s');
    expect(r.stdout).toMatch(/\[demo\] call aborted after \d+\.\d s: AbortError, notifications\/cancelled sent: true/);
    expect(r.stdout).toMatch(/\[demo\] worker idle \d+ ms after the cancel \(running: 0\)/);
    expect(r.stdout).toMatch(/\[demo\] next call answered: spun \d+ slices/);
    expect(out).toContain('[demo] executor://stats: cancelled: 1, hardKilled: 0, completed: 1, running: 0, threads: 2');
    expect(out.at(-1)).toBe('[demo] the work stopped at a checkpoint and no thread was killed: the pool reused it');
    expect(README).toContain('node examples/cancel-demo.mjs');
  });
});
