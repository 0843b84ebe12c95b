#!/usr/bin/env node
/**
 * The MCP Bundle (.mcpb) for desktop clients: `npm pack` (which builds), the tarball unpacked into a staging folder,
 * its production dependencies installed there (no dev dependencies, no optional peers: the default install of
 * docs/install.md), bundle/manifest.json with the package's version, `mcpb validate`, then `mcpb pack`.
 *
 *   node scripts/bundle.mjs [--out DIR] [--prebuilt]
 *
 * writes DIR/mcp-cancel-pool-<version>.mcpb (default DIR: the current one). `--prebuilt` packs the build already in
 * dist/ (`npm pack --ignore-scripts`) instead of building it again in place: test/bundle.test.ts uses it, since a
 * rebuild rewrites dist/ under the tests running beside it (seen: a worker host that imported a half-written module).
 *
 * The manifest's user settings are the root the file tools may read (`--root`) and the worker threads
 * (`--threads`). test/bundle.test.ts runs this, unpacks the bundle, starts the manifest's command and calls a tool.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const at = process.argv.indexOf('--out');
const out = resolve(at > 0 ? process.argv[at + 1] : '.');
const prebuilt = process.argv.includes('--prebuilt');
const MCPB = join(ROOT, 'node_modules/@anthropic-ai/mcpb/dist/cli/cli.js');
const run = (cmd, args, cwd) =>
  execFileSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });

const work = mkdtempSync(join(tmpdir(), 'mcpb-stage-'));
try {
  const pack = ['pack', '--json', '--pack-destination', work, ...(prebuilt ? ['--ignore-scripts'] : [])];
  const [packed] = JSON.parse(run('npm', pack, ROOT));
  run('tar', ['-xzf', join(work, packed.filename), '-C', work], ROOT);
  const stage = join(work, 'package');
  // Production dependencies only, with the required peers (the SDK server and core); no lockfile in the bundle. The
  // staged manifest drops devDependencies first: as the root project, npm would take a peer that is also a dev
  // dependency for a dev one and omit it.
  const pkg = JSON.parse(readFileSync(join(stage, 'package.json'), 'utf8'));
  delete pkg.devDependencies;
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  run('npm', ['install', '--omit=dev', '--no-package-lock', '--no-audit', '--no-fund', '--ignore-scripts'], stage);
  const manifest = JSON.parse(readFileSync(join(ROOT, 'bundle/manifest.json'), 'utf8'));
  manifest.version = packed.version;
  writeFileSync(join(stage, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  run(process.execPath, [MCPB, 'validate', join(stage, 'manifest.json')], ROOT);
  mkdirSync(out, { recursive: true });
  const file = join(out, `mcp-cancel-pool-${packed.version}.mcpb`);
  run(process.execPath, [MCPB, 'pack', stage, join(work, 'bundle.mcpb')], ROOT);
  renameSync(join(work, 'bundle.mcpb'), file);
  process.stdout.write(`${file}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
