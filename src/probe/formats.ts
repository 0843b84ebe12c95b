/** Machine-readable verdicts for CI: `--format json` and `--format junit`. */
import type { ProbeOptions, TargetResult } from './types.js';
import { overall } from './report.js';

const name = (r: TargetResult) => `${r.label}${r.era ? ` [${r.era}]` : ''}`;

/** One JSON document: per server and era, its verdicts and any error; `result` is `pass`, `fail` or `inconclusive` (no rule failed, one could not be decided). */
export function jsonReport(results: readonly TargetResult[], options: ProbeOptions): string {
  return JSON.stringify(
    {
      result: overall(results),
      options,
      servers: results.map((r) => ({
        label: r.label,
        target: r.target,
        era: r.era ?? null,
        protocolVersion: r.protocolVersion ?? null,
        serverInfo: r.serverInfo ?? null,
        error: r.error ?? null,
        verdicts: r.verdicts,
      })),
    },
    null,
    2,
  );
}

const xml = (s: string) =>
  s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    // eslint-disable-next-line no-control-regex -- stripping control characters is the point
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '');

/**
 * JUnit XML: a test suite per server and era, a test case per rule. FAIL is a
 * `<failure>`, skip is `<skipped>`, INCONCLUSIVE is `<skipped>` too (JUnit
 * has no "undecided"; its message starts with INCONCLUSIVE), WARN passes
 * with its evidence in `<system-out>`; a server that could not be probed is
 * an `<error>`.
 */
export function junitReport(results: readonly TargetResult[]): string {
  const suites = results.map((r) => {
    const cases = r.verdicts.map((v) => {
      const body =
        v.outcome === 'fail'
          ? `<failure message="${xml(v.evidence)}" type="${xml(v.rule)}"/>`
          : v.outcome === 'skip'
            ? `<skipped message="${xml(v.evidence)}"/>`
            : v.outcome === 'inconclusive'
              ? `<skipped message="${xml(`INCONCLUSIVE: ${v.evidence}`)}"/>`
              : `<system-out>${xml(`${v.outcome.toUpperCase()}: ${v.evidence}`)}</system-out>`;
      return `    <testcase classname="${xml(name(r))}" name="${xml(`${v.rule}: ${v.title}`)}">${body}</testcase>`;
    });
    if (r.error !== undefined)
      cases.push(
        `    <testcase classname="${xml(name(r))}" name="probe"><error message="${xml(r.error.split('\n')[0] ?? '')}">${xml(r.error)}</error></testcase>`,
      );
    const failures = r.verdicts.filter((v) => v.outcome === 'fail').length;
    const skipped = r.verdicts.filter((v) => v.outcome === 'skip' || v.outcome === 'inconclusive').length;
    return `  <testsuite name="${xml(name(r))}" tests="${cases.length}" failures="${failures}" errors="${r.error !== undefined ? 1 : 0}" skipped="${skipped}">\n${cases.join('\n')}\n  </testsuite>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="mcp-cancel-pool probe">\n${suites.join('\n')}\n</testsuites>`;
}
