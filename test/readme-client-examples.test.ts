/**
 * The two client examples of docs/client.md and docs/tasks.md, run unchanged (the
 * files the pages show, examples/call-with-cancel.mjs and examples/task-with-cancel.mjs)
 * from this checkout, with no `mcp-cancel-pool` on PATH: each finds the server
 * as a user's project would, `import.meta.resolve('mcp-cancel-pool/cli')`,
 * and spawns it with its own Node. Against a 2026-07-28 server (this build:
 * the client negotiates 2026) and a 2025-11-25-only one: for that case a
 * module hook (`--import`) resolves `mcp-cancel-pool/cli` to this build behind
 * a filter that refuses `server/discover`, and the client falls back.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI } from './helpers.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LEGACY_ONLY = new URL('../dist-dev/test/fixtures/legacy-only.js', import.meta.url);
const EXAMPLES = ['examples/call-with-cancel.mjs', 'examples/task-with-cancel.mjs'] as const;

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Node options that make `mcp-cancel-pool/cli` resolve to this build as a 2025-11-25-only server. */
function legacyOnly(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-cancel-pool-2025-'));
  dirs.push(dir);
  // legacy-only.js takes the CLI as its first argument: `node legacy-cli.mjs serve` runs `legacy-only.js <CLI> serve`.
  writeFileSync(
    join(dir, 'legacy-cli.mjs'),
    `process.argv.splice(2, 0, ${JSON.stringify(CLI)});\nawait import(${JSON.stringify(LEGACY_ONLY.href)});\n`,
  );
  const target = pathToFileURL(join(dir, 'legacy-cli.mjs')).href;
  writeFileSync(
    join(dir, 'hook.mjs'),
    `import { registerHooks } from 'node:module';\n` +
      `registerHooks({ resolve: (specifier, context, next) =>\n` +
      `  specifier === 'mcp-cancel-pool/cli' ? { url: ${JSON.stringify(target)}, shortCircuit: true } : next(specifier, context) });\n`,
  );
  return `--import=${pathToFileURL(join(dir, 'hook.mjs')).href}`;
}

async function example(file: string, era: '2025' | '2026'): Promise<string> {
  // No mcp-cancel-pool on PATH: only Node's own directory and the system's.
  const PATH = [join(process.execPath, '..'), '/usr/bin', '/bin'].join(delimiter);
  const env = { ...process.env, PATH, ...(era === '2025' && { NODE_OPTIONS: legacyOnly() }) };
  const { stdout } = await run(process.execPath, [join(ROOT, file)], { cwd: ROOT, env, timeout: 120_000 });
  return stdout;
}

it('docs/client.md and docs/tasks.md show these files verbatim', () => {
  const pages = {
    'examples/call-with-cancel.mjs': 'docs/client.md',
    'examples/task-with-cancel.mjs': 'docs/tasks.md',
  } as const;
  for (const file of EXAMPLES) {
    const page = readFileSync(join(ROOT, pages[file]), 'utf8');
    const code = readFileSync(join(ROOT, file), 'utf8').trimEnd();
    expect(page, file).toContain(`<!-- ${file} -->\n\`\`\`js\n${code}\n\`\`\``);
  }
});

describe.each([
  ['2025', 'legacy'],
  ['2026', 'modern'],
] as const)('against a %s server', (era, name) => {
  it('call-with-cancel: the call is cancelled after a second, once, and the client says so', async () => {
    const out = await example(EXAMPLES[0], era);
    expect(out).toContain(`era: ${name}`);
    expect(out).toMatch(/AbortError user pressed Stop \d+ true/);
    expect(out).toMatch(/cancelsSent: 1,/);
  });

  it('task-with-cancel: cancelled after a second (2025 by tasks/cancel of the task; 2026 the server answers directly, so the call is cancelled)', async () => {
    const out = await example(EXAMPLES[1], era);
    expect(out).toContain('cancelled: user pressed Stop');
    expect(out).toContain(era === '2025' ? 'legacy 1' : 'modern 0');
    if (era === '2025') expect(out.match(/status: cancelled/g)).toHaveLength(1); // reported once
  });
});
