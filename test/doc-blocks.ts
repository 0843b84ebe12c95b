/** The pages a user reads, and their fenced code blocks: what test/docs-links.test.ts and test/docs-files.test.ts read. */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Every page of the documentation, relative to the checkout. */
export const PAGES = [
  'README.md',
  'CONTRIBUTING.md',
  'CHANGELOG.md',
  'BENCHMARKS.md',
  'PROBE.md',
  'bench/README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  ...readdirSync(join(ROOT, 'examples'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('README.md'))
    .map((f) => `examples/${f}`),
];

/** A fenced code block of a page: its language, body, the line before its fence and where it starts. */
export interface Block {
  lang: string;
  body: string;
  marker: string;
  line: number;
}

/** Every fenced block of a page, those indented in a list item included (CHANGELOG.md quotes none). */
export function blocks(text: string): Block[] {
  const lines = text.split('\n');
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^( *)(```+|~~~+)\s*([\w+-]*)/.exec(lines[i]!);
    if (!open) continue;
    const [indent, fence, lang] = [open[1]!, open[2]!, open[3]!];
    let end = i + 1;
    while (end < lines.length && !lines[end]!.trimStart().startsWith(fence)) end++;
    const body = lines
      .slice(i + 1, end)
      .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
      .join('\n');
    out.push({ lang, body, marker: (lines[i - 1] ?? '').trim(), line: i + 1 });
    i = end;
  }
  return out;
}
