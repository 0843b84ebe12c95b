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
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; exports: Record<string, unknown> };
    for (const sub of Object.keys(pkg.exports)) {
      const name = sub === '.' ? pkg.name : `${pkg.name}/${sub.slice(2)}`;
      expect(report).toContain(`## \`${name}\``);
    }
    expect(report).toMatch(/- Executor: class/);
    expect(report).not.toMatch(/: unknown$/m);
  });
});
