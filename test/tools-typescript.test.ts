/**
 * Tools modules in TypeScript, run without a build step (Node 22.18+ erases the types, on the main thread and in the
 * worker threads): a real server subprocess serves a `.ts` module that imports a `.ts` helper, to SDK 2.x clients of
 * both eras; and each thing Node refuses in a TypeScript module ends `serve` with one line naming the file and the fix.
 * The modules live in a temporary project with mcp-cancel-pool installed (a symlink to this checkout), as a user's do.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, describe, expect, it } from 'vitest';
import { lines, ROOT, run } from './cli-helpers.js';
import { CLI } from './helpers.js';
import { MODERN } from './modern-helpers.js';

const project = mkdtempSync(join(tmpdir(), 'mcp-ts-tools-'));
afterAll(() => rmSync(project, { recursive: true, force: true }));
mkdirSync(join(project, 'node_modules'));
symlinkSync(ROOT, join(project, 'node_modules', 'mcp-cancel-pool'), 'dir');
writeFileSync(join(project, 'package.json'), '{ "name": "ts-tools", "type": "module" }\n');
const file = (name: string, text: string) => {
  writeFileSync(join(project, name), text);
  return join(project, name);
};

// Types on parameters, an interface, a type-only import, and a helper imported by its .ts name.
file(
  'shout.ts',
  "export interface Shouted { text: string; length: number }\nexport const shout = (s: string): Shouted => ({ text: s.toUpperCase() + '!', length: s.length });\n",
);
const TOOLS = file(
  'my-tools.ts',
  [
    "import { defineTool, z, type StageContext } from 'mcp-cancel-pool/tools';",
    "import { isMainThread } from 'node:worker_threads';",
    "import { shout, type Shouted } from './shout.ts';",
    '',
    'export default [',
    '  defineTool({',
    "    name: 'shout',",
    "    description: 'Upper-cases text, in a worker thread.',",
    '    input: z.object({ text: z.string() }),',
    '    stages: [',
    '      ({ text }: { text: string }, ctx: StageContext): Shouted => {',
    '        ctx.checkpoint();',
    '        return shout(text);',
    '      },',
    "      (s: Shouted) => `${s.text} (${s.length}) on the ${isMainThread ? 'main thread' : 'worker'}`,",
    '    ],',
    '  }),',
    '];',
    '',
  ].join('\n'),
);

describe('a TypeScript tools module, served as written', () => {
  for (const era of ['2025-11-25', MODERN] as const) {
    it(`lists and calls its tool over stdio (${era} client), the stages running in a worker`, async () => {
      const client = new Client(
        { name: 'ts-tools-test', version: '1.0.0' },
        { versionNegotiation: { mode: era === MODERN ? { pin: MODERN } : 'legacy' } },
      );
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [CLI, 'serve', '--no-builtins', '--threads', '1', '--tools', TOOLS],
          stderr: 'pipe',
        }),
      );
      try {
        expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['shout']);
        const result = await client.callTool({ name: 'shout', arguments: { text: 'hi there' } });
        expect(result.content).toEqual([{ type: 'text', text: 'HI THERE! (8) on the worker' }]);
        const stats = await client.readResource({ uri: 'executor://stats' });
        expect(JSON.parse((stats.contents[0] as { text: string }).text)).toMatchObject({ completed: 1 });
      } finally {
        await client.close();
      }
    });
  }
});

describe('what Node refuses in a TypeScript module: one line naming the file and the fix, exit 1', () => {
  const tool = (extra: string) =>
    `import { defineTool, z } from 'mcp-cancel-pool/tools';\n${extra}\nexport default [defineTool({ name: 't', input: z.object({}), stages: [() => 'x'] })];\n`;
  mkdirSync(join(project, 'node_modules', 'ts-lib'));
  writeFileSync(
    join(project, 'node_modules', 'ts-lib', 'package.json'),
    '{ "name": "ts-lib", "type": "module", "exports": "./index.ts" }\n',
  );
  writeFileSync(join(project, 'node_modules', 'ts-lib', 'index.ts'), 'export const n: number = 1;\n');
  const cases: [string, string, RegExp][] = [
    [
      'an enum',
      file('with-enum.ts', tool('export enum Colour { Red, Green }')),
      /\/with-enum\.ts:2:8: TypeScript enum is not supported in strip-only mode; Node runs TypeScript by erasing its types only: write it without enum, namespace or parameter properties \("erasableSyntaxOnly"/,
    ],
    [
      'a parameter property',
      file('with-param-prop.ts', tool('export class Box { constructor(private size: number) {} }')),
      /\/with-param-prop\.ts:2:\d+: TypeScript parameter property is not supported in strip-only mode/,
    ],
    [
      "tsc's ./x.js import of a .ts file",
      file('js-import.ts', tool("import { shout } from './shout.js';\nvoid shout;")),
      /js-import\.ts imports .*\/shout\.js, but the file is .*\/shout\.ts: Node runs TypeScript as written, so import it by its \.ts name \("allowImportingTsExtensions"/,
    ],
    [
      'a .ts file under node_modules',
      file('imports-ts-lib.ts', tool("import { n } from 'ts-lib';\nvoid n;")),
      /it loads .*node_modules\/ts-lib\/index\.ts, TypeScript under node_modules, which Node does not run: a package must ship compiled \.js/,
    ],
    [
      'JSX',
      file('view.tsx', 'export default [];\n'),
      /Node does not compile JSX; compile it \(tsc\) and pass the \.js file/,
    ],
    ['a .cts module', file('old.cts', 'module.exports = [];\n'), /CommonJS module; tools modules must be ES modules/],
  ];
  for (const [what, path, fix] of cases) {
    it(what, async () => {
      const r = await run(process.execPath, [CLI, 'serve', '--tools', path], { ms: 20_000 });
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(lines(r.stderr), r.stderr).toHaveLength(1);
      expect(r.stderr).toContain(path);
      expect(r.stderr).toMatch(fix);
    });
  }
});
