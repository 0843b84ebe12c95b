/**
 * The documentation a user reads holds together: every relative link in
 * README.md, CONTRIBUTING.md, CHANGELOG.md, docs/*.md, BENCHMARKS.md,
 * PROBE.md, bench/README.md and every README.md under examples/ names a file
 * that exists, every #anchor names a heading of the page it points to
 * (GitHub's slugs), and the pages keep the sizes issue 57 set (README ≤ 250
 * lines, BENCHMARKS.md ≤ 400).
 *
 * Their code blocks run as written or say why not (issue 63): every fence
 * names its language (`text` for output), and every shell block is preceded
 * by `<!-- runnable -->`, which makes this test run it from the checkout and
 * expect exit 0, or by `<!-- not runnable: <why> -->`. A block that pastes
 * into a terminal but cannot run here (a global install, Redis, a server
 * that runs until stopped, minutes of CPU) says so, and names what tests it.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { blocks, PAGES } from './doc-blocks.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The page without its fenced code blocks (a `# comment` in a shell block is no heading, a link in code no link). */
const prose = (text: string) =>
  text.replace(/^(```|~~~)[^]*?^\1/gm, '').replace(/`[^`\n]*`/g, (m) => ' '.repeat(m.length));

/** GitHub's heading anchors: lower case, markup and punctuation dropped, spaces to dashes, repeats numbered. */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const text = readFileSync(file, 'utf8').replace(/^(```|~~~)[^]*?^\1/gm, '');
  for (const m of text.matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const base = m[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of text.matchAll(/<a (?:name|id)="([^"]+)"/g)) out.add(m[1]!);
  return out;
}

/** Relative links of a page: [text](target) and ![alt](target), outside code. */
function links(page: string): string[] {
  const text = prose(readFileSync(join(ROOT, page), 'utf8'));
  return [...text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?: "[^"]*")?\)/g)]
    .map((m) => m[1]!)
    .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

describe('links and anchors', () => {
  it.each(PAGES)('%s: every relative link resolves, and every anchor names a heading', (page) => {
    const broken: string[] = [];
    for (const link of links(page)) {
      const [path, anchor] = link.split('#', 2) as [string, string | undefined];
      const target = path === '' ? join(ROOT, page) : join(ROOT, dirname(page), decodeURIComponent(path));
      if (!existsSync(target)) {
        broken.push(`${link}: no file ${relative(ROOT, target)}`);
        continue;
      }
      if (anchor !== undefined && anchor !== '') {
        if (!target.endsWith('.md') || statSync(target).isDirectory())
          broken.push(`${link}: an anchor into a file that is not Markdown`);
        else if (!anchors(target).has(decodeURIComponent(anchor)))
          broken.push(`${link}: no heading #${anchor} in ${relative(ROOT, target)}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('the check finds a broken link and a broken anchor (it can fail)', () => {
    const here = anchors(join(ROOT, 'README.md'));
    expect(here.has('quick-start')).toBe(true);
    expect(here.has('no-such-heading')).toBe(false);
    expect(existsSync(join(ROOT, 'docs/no-such-page.md'))).toBe(false);
    expect(links('README.md')).toContain('docs/guarantees.md');
  });
});

describe('sizes', () => {
  const count = (page: string) => readFileSync(join(ROOT, page), 'utf8').trimEnd().split('\n').length;
  it('README.md is at most 250 lines, BENCHMARKS.md at most 400', () => {
    expect(count('README.md')).toBeLessThanOrEqual(250);
    expect(count('BENCHMARKS.md')).toBeLessThanOrEqual(400);
  });

  it('each docs/ page opens with what its reader can do after reading it', () => {
    for (const page of PAGES.filter((p) => p.startsWith('docs/'))) {
      const opening = readFileSync(join(ROOT, page), 'utf8').split('\n').slice(1, 6).join(' ');
      expect(opening, page).toMatch(/After reading this page you/);
    }
  });
});

const SHELL = new Set(['sh', 'bash', 'shell', 'console', 'zsh']);
const RUNNABLE = '<!-- runnable -->';
/** `<!-- not runnable: <why> -->`, the reason a sentence of its own. */
const NOT_RUNNABLE = /^<!-- not runnable: (\S.{9,}?) -->$/;

const pageBlocks = PAGES.filter((p) => p !== 'CHANGELOG.md').flatMap((page) =>
  blocks(readFileSync(join(ROOT, page), 'utf8')).map((b) => ({ ...b, page, name: `${page}:${b.line}` })),
);

describe('code blocks say whether they run', () => {
  it('every fence names its language (`text` for output, a diagram, a help text)', () => {
    expect(pageBlocks.filter((b) => b.lang === '').map((b) => b.name)).toEqual([]);
  });

  it('every shell block is marked runnable, or not runnable with its reason', () => {
    const unmarked = pageBlocks
      .filter((b) => SHELL.has(b.lang) && b.marker !== RUNNABLE && !NOT_RUNNABLE.test(b.marker))
      .map((b) => `${b.name} (${b.marker === '' ? 'no marker' : `line before: ${b.marker}`})`);
    expect(unmarked).toEqual([]);
  });

  it('a marker stands only before a shell block', () => {
    const stray = pageBlocks
      .filter((b) => !SHELL.has(b.lang) && (b.marker === RUNNABLE || NOT_RUNNABLE.test(b.marker)))
      .map((b) => b.name);
    expect(stray).toEqual([]);
  });

  it('the check finds an unmarked block, a reasonless marker and a fence without a language (it can fail)', () => {
    const found = blocks(
      [
        '<!-- runnable -->',
        '```sh',
        'true',
        '```',
        '',
        '```sh',
        'false',
        '```',
        '<!-- not runnable: -->',
        '```bash',
        'x',
        '```',
        '```',
        'out',
        '```',
      ].join('\n'),
    );
    expect(found.map((b) => [b.lang, b.body, b.marker])).toEqual([
      ['sh', 'true', RUNNABLE],
      ['sh', 'false', ''],
      ['bash', 'x', '<!-- not runnable: -->'],
      ['', 'out', '```'],
    ]);
    expect(NOT_RUNNABLE.test(found[2]!.marker)).toBe(false);
    expect(NOT_RUNNABLE.test('<!-- not runnable: needs Redis on :6379 -->')).toBe(true);
  });
});

describe('runnable blocks', () => {
  const runnable = pageBlocks.filter((b) => b.marker === RUNNABLE);

  it('there are some, and each is a shell block', () => {
    expect(runnable.length).toBeGreaterThan(0);
    for (const b of runnable) expect(SHELL.has(b.lang), b.name).toBe(true);
  });

  it.each(runnable.map((b) => [b.name, b] as const))(
    '%s runs from the checkout and exits 0',
    async (_name, b) => {
      const result = await new Promise<{ code: number; stderr: string }>((resolve) => {
        execFile('bash', ['-euo', 'pipefail', '-c', b.body], { cwd: ROOT, timeout: 60_000 }, (error, _stdout, stderr) =>
          resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stderr }),
        );
      });
      expect(result.code, result.stderr).toBe(0);
    },
    90_000,
  );
});
