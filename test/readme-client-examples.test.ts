/**
 * The two client examples of docs/client.md and docs/tasks.md, run unchanged (the
 * files the pages show, examples/call-with-cancel.mjs and examples/task-with-cancel.mjs)
 * against a 2025-11-25 server and a 2026-07-28 server. They start
 * `mcp-cancel-pool serve` by name, as a user's would: a directory put first
 * on PATH holds an `mcp-cancel-pool` that runs this build, either as is
 * (dual-era: the client negotiates 2026) or behind a filter that refuses
 * `server/discover` (a 2025-only server: the client falls back).
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI } from './helpers.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LEGACY_ONLY = fileURLToPath(new URL('../dist-dev/test/fixtures/legacy-only.js', import.meta.url));
const EXAMPLES = ['examples/call-with-cancel.mjs', 'examples/task-with-cancel.mjs'] as const;

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A PATH directory whose `mcp-cancel-pool` is this build, in one era or both. */
function shim(era: '2025' | '2026'): string {
  const dir = mkdtempSync(join(tmpdir(), `mcp-cancel-pool-${era}-`));
  dirs.push(dir);
  const target = era === '2025' ? `"${process.execPath}" "${LEGACY_ONLY}" "${CLI}"` : `"${process.execPath}" "${CLI}"`;
  writeFileSync(join(dir, 'mcp-cancel-pool'), `#!/bin/sh\nexec ${target} "$@"\n`);
  chmodSync(join(dir, 'mcp-cancel-pool'), 0o755);
  return dir;
}

async function example(file: string, era: '2025' | '2026'): Promise<string> {
  const env = { ...process.env, PATH: `${shim(era)}:${process.env.PATH ?? ''}` };
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
