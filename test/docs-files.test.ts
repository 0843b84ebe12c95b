/**
 * A code block of the docs that says it is a file (its first line a comment
 * naming it, `// my-tools.mjs`) is that file, and works as the page says
 * (issue 63). Each page's file blocks are written out, as shown, into a
 * project of their own where the package is installed the way a user's
 * project has it (`node_modules/mcp-cancel-pool` is this checkout; the SDK
 * and zod beside it), then run: a tools module is served by this build's
 * `serve --tools <file> --no-builtins` to a real SDK 2.x client, which lists
 * and calls its tool; a server module is spawned and its tools called the
 * same way. A new file block fails the first test until it has a case here.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, describe, expect, it } from 'vitest';
import { blocks, PAGES } from './doc-blocks.js';
import { CLI } from './helpers.js';
import { ROOT } from './cli-helpers.js';

/** A file block: the page, the file it names, its text. */
interface FileBlock {
  page: string;
  file: string;
  body: string;
}

const FILE_BLOCKS: FileBlock[] = PAGES.flatMap((page) =>
  blocks(readFileSync(join(ROOT, page), 'utf8'))
    .filter((b) => /^(js|mjs|ts|mts|javascript|typescript)$/.test(b.lang))
    .flatMap((b) => {
      const named = /^\/\/ ([\w.-]+\.(?:mjs|js|mts|ts))\n/.exec(b.body);
      return named ? [{ page, file: named[1]!, body: b.body }] : [];
    }),
);

/** How each file block is run: a tools module served by `serve`, or a server of its own; the calls and their answers. */
interface Case {
  run: 'serve --tools' | 'node';
  tools: string[];
  calls: { name: string; arguments: Record<string, unknown>; text: string }[];
}

const CASES: Record<string, Case> = {
  'README.md my-tools.mjs': {
    run: 'serve --tools',
    tools: ['count_to'],
    calls: [{ name: 'count_to', arguments: { n: 2_000_001 }, text: 'counted to 2000001' }],
  },
  'docs/tools.md my-tools.ts': {
    run: 'serve --tools',
    tools: ['word_stats'],
    calls: [{ name: 'word_stats', arguments: { text: 'to be or not to be', top: 2 }, text: 'to: 2\nbe: 2' }],
  },
  'docs/embedding.md heavy-tools.mjs': {
    run: 'serve --tools',
    tools: ['spin'],
    calls: [{ name: 'spin', arguments: { ms: 20 }, text: 'spun 20 ms' }],
  },
  'docs/embedding.md server.mjs': {
    run: 'node',
    tools: ['echo', 'spin'],
    calls: [
      { name: 'echo', arguments: { text: 'hi' }, text: 'hi' },
      { name: 'spin', arguments: { ms: 20 }, text: 'spun 20 ms' },
    ],
  },
};

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A project holding one page's file blocks, with the package and its peers installed as links to this checkout's. */
function project(page: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-doc-files-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'doc-files', private: true, type: 'module' }));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(ROOT, join(dir, 'node_modules/mcp-cancel-pool'), 'dir');
  for (const dep of ['@modelcontextprotocol', 'zod'])
    symlinkSync(join(ROOT, 'node_modules', dep), join(dir, 'node_modules', dep), 'dir');
  for (const b of FILE_BLOCKS.filter((f) => f.page === page)) writeFileSync(join(dir, b.file), `${b.body}\n`);
  return dir;
}

describe('file blocks of the docs', () => {
  it('each has a case here, and every case has its block', () => {
    expect(FILE_BLOCKS.map((b) => `${b.page} ${b.file}`).sort()).toEqual(Object.keys(CASES).sort());
  });

  it.each(FILE_BLOCKS.map((b) => [`${b.page} ${b.file}`, b] as const))(
    '%s runs as written: its tools are listed and answer a real client',
    async (name, b) => {
      const c = CASES[name]!;
      const cwd = project(b.page);
      const args =
        c.run === 'node' ? [b.file] : [CLI, 'serve', '--tools', `./${b.file}`, '--no-builtins', '--threads', '1'];
      const transport = new StdioClientTransport({ command: process.execPath, args, cwd, stderr: 'pipe' });
      let stderr = '';
      transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      const client = new Client({ name: 'docs-files', version: '1.0.0' });
      try {
        await client.connect(transport).catch((error: unknown) => {
          throw new Error(`${String(error)}; the server's stderr:\n${stderr}`);
        });
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name).sort(), stderr).toEqual(c.tools);
        for (const call of c.calls) {
          const result = await client.callTool({ name: call.name, arguments: call.arguments });
          expect(result, stderr).toMatchObject({ content: [{ type: 'text', text: call.text }] });
          expect(result.isError ?? false).toBe(false);
        }
      } finally {
        await client.close();
      }
    },
    120_000,
  );
});
