/**
 * The public surface is pinned: a fresh report of every entry point's exported names and kinds (from the built
 * declarations) must equal the committed api/report.md. A change to what users can import then shows up as a diff to
 * review; after a deliberate change, `npm run api:report` rewrites the file.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without declarations; its two exports are typed below.
import * as script from '../scripts/api-report.mjs';

const { apiReport, REPORT_PATH } = script as { apiReport: () => string; REPORT_PATH: string };

describe('public API report', () => {
  it('matches the committed api/report.md (run `npm run api:report` after a deliberate change)', () => {
    expect(apiReport()).toBe(readFileSync(REPORT_PATH, 'utf8'));
  });

  it('lists every entry point of package.json with at least one name', () => {
    const report = apiReport();
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      name: string;
      exports: Record<string, unknown>;
    };
    for (const sub of Object.keys(pkg.exports)) {
      const name = sub === '.' ? pkg.name : `${pkg.name}/${sub.slice(2)}`;
      expect(report).toContain(`## \`${name}\``);
    }
    expect(report).toMatch(/- Executor: class/);
    expect(report).not.toMatch(/: unknown$/m);
  });

  it('exports each name from one entry only, but for a type two audiences need (docs/entry-points.md)', () => {
    const where = new Map<string, string[]>();
    for (const [entry, names] of sections(apiReport()))
      for (const [name, kind] of names) where.set(name, [...(where.get(name) ?? []), `${entry} (${kind})`]);
    const shared = [...where].filter(([, entries]) => entries.length > 1);
    expect(shared.filter(([, entries]) => !entries.every((e) => / \((type|interface)\)$/.test(e)))).toEqual([]);
    expect(shared.map(([name]) => name)).toEqual(['CancelSource', 'RequestId']);
  });

  it('docs/entry-points.md has one row per entry point naming exactly what it exports (npm run api:report rewrites the names)', () => {
    const doc = readFileSync(new URL('../docs/entry-points.md', import.meta.url), 'utf8');
    const rows = new Map(
      [...doc.matchAll(/^\| `([^`]+)` \| [^|]+ \| (.+) \|$/gm)].map((m) => [
        m[1]!,
        m[2] === '—' ? [] : [...m[2]!.matchAll(/`(\w+)`/g)].map((n) => n[1]!),
      ]),
    );
    const report = sections(apiReport());
    expect([...rows.keys()]).toEqual([...report.keys()]);
    for (const [entry, names] of report) expect(rows.get(entry), entry).toEqual(names.map(([name]) => name));
  });
});

/** The report's sections: entry point → its [name, kind] pairs, in the report's order. */
function sections(report: string): Map<string, [string, string][]> {
  const out = new Map<string, [string, string][]>();
  let current: [string, string][] | undefined;
  for (const line of report.split('\n')) {
    const entry = /^## `(.+)`$/.exec(line);
    if (entry) out.set(entry[1]!, (current = []));
    const name = /^- (\w+): (.+)$/.exec(line);
    if (name && current) current.push([name[1]!, name[2]!]);
  }
  return out;
}
