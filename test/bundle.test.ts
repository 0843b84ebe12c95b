/**
 * The MCP Bundle for desktop clients, as a client installs it: scripts/bundle.mjs packs it (production
 * dependencies only, `mcpb validate`, `mcpb pack`), `mcpb unpack` unpacks it, and the manifest's own command,
 * with its user settings filled in as a desktop client does (`${__dirname}`, `${user_config.*}`), is started and
 * answers `initialize` and `tools/call` from a real SDK client.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lines, ROOT, run } from './cli-helpers.js';

interface Manifest {
  version: string;
  server: { entry_point: string; mcp_config: { command: string; args: string[] } };
  user_config: Record<string, { type: string; default?: unknown; required?: boolean }>;
  tools: { name: string }[];
}

const work = mkdtempSync(join(tmpdir(), 'mcpb-test-'));
const MCPB = join(ROOT, 'node_modules/@anthropic-ai/mcpb/dist/cli/cli.js');
let bundle: string;
let unpacked: string;
let manifest: Manifest;

beforeAll(async () => {
  // The build npm test made: packing with a build would rewrite dist/ under the tests running beside this one.
  const made = await run(process.execPath, [join(ROOT, 'scripts/bundle.mjs'), '--out', work, '--prebuilt'], {
    ms: 500_000,
    env: { npm_config_cache: join(work, 'npm-cache'), npm_config_update_notifier: 'false' },
  });
  expect(made.code, made.stderr).toBe(0);
  bundle = lines(made.stdout).at(-1)!;
  unpacked = join(work, 'unpacked');
  const unpack = await run(process.execPath, [MCPB, 'unpack', bundle, unpacked], { ms: 60_000 });
  expect(unpack.code, unpack.stderr).toBe(0);
  manifest = JSON.parse(readFileSync(join(unpacked, 'manifest.json'), 'utf8')) as Manifest;
}, 600_000);

afterAll(() => rmSync(work, { recursive: true, force: true }), 60_000);

describe('the MCP Bundle', () => {
  it('is valid, carries the package version, and has the root and the thread count as user settings', async () => {
    const validate = await run(process.execPath, [MCPB, 'validate', join(unpacked, 'manifest.json')], { ms: 60_000 });
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);
    expect(manifest.version).toBe(
      (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version,
    );
    expect(manifest.user_config.root).toMatchObject({ type: 'directory', required: true });
    expect(manifest.user_config.threads).toMatchObject({ type: 'number' });
    expect(manifest.server.mcp_config.args).toEqual(
      expect.arrayContaining(['--root', '${user_config.root}', '--threads', '${user_config.threads}']),
    );
  });

  it('holds the production dependencies only: the SDK server, no dev dependency, no optional peer', () => {
    expect(existsSync(join(unpacked, manifest.server.entry_point))).toBe(true);
    expect(existsSync(join(unpacked, 'node_modules/@modelcontextprotocol/server/package.json'))).toBe(true);
    for (const absent of [
      'typescript',
      'vitest',
      'bullmq',
      'vega',
      '@modelcontextprotocol/sdk',
      '@modelcontextprotocol/client',
      '@anthropic-ai/mcpb',
    ]) {
      expect(existsSync(join(unpacked, 'node_modules', absent)), absent).toBe(false);
    }
  });

  it("starts with the manifest's command and answers initialize and a tools/call within the configured root", async () => {
    const root = join(work, 'root');
    mkdirSync(root);
    writeFileSync(join(root, 'notes.txt'), 'bundled\n');
    const settings: Record<string, string> = {
      '${__dirname}': unpacked,
      '${user_config.root}': root,
      '${user_config.threads}': '1',
    };
    const args = manifest.server.mcp_config.args.map((a) => a.replace(/\$\{[^}]+\}/g, (v) => settings[v] ?? v));
    expect(args.join(' ')).not.toContain('${');
    const client = new Client({ name: 'bundle-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: manifest.server.mcp_config.command === 'node' ? process.execPath : manifest.server.mcp_config.command,
        args,
        cwd: work,
        stderr: 'pipe',
      }),
    );
    try {
      expect(client.getServerVersion()?.name).toBe('mcp-cancel-pool');
      // The tools the manifest shows a user before installing are the ones the server lists (docs/install.md names them).
      const listed = (await client.listTools()).tools.map((t) => t.name);
      expect(listed.sort()).toEqual(manifest.tools.map((t) => t.name).sort());
      const hashed = await client.callTool({ name: 'hash_file', arguments: { path: 'notes.txt' } });
      expect(hashed.isError).toBeFalsy();
      expect(JSON.stringify(hashed.content)).toContain(createHash('sha256').update('bundled\n').digest('hex'));
      const outside = await client.callTool({ name: 'hash_file', arguments: { path: '../outside.txt' } });
      expect(outside.isError).toBe(true);
    } finally {
      await client.close();
    }
  }, 60_000);
});
