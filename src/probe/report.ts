/** The human-readable results: the summary table for the terminal and the Markdown report. */
import { ORDERING_NOTE } from './ordering.js';
import { fmt } from './stats.js';
import type { Measure, Outcome, ProbeOptions, TargetResult } from './types.js';

const MARK: Record<Outcome, string> = {
  pass: 'PASS',
  fail: 'FAIL',
  warn: 'WARN',
  skip: 'skip',
  inconclusive: 'INCONCLUSIVE',
};

/** Whether any rule failed, or a server could not be probed at all. */
export function failed(results: readonly TargetResult[]): boolean {
  return results.some((r) => r.error !== undefined || r.verdicts.some((v) => v.outcome === 'fail'));
}

/** Whether some rule could not be decided (and none failed): not a pass, not a violation. */
export function inconclusive(results: readonly TargetResult[]): boolean {
  return !failed(results) && results.some((r) => r.verdicts.some((v) => v.outcome === 'inconclusive'));
}

/** The run's overall result, as `--format json` writes it and the exit status says it (0 pass, 1 fail, 3 inconclusive; 2 when a server could not be probed). */
export function overall(results: readonly TargetResult[]): 'pass' | 'fail' | 'inconclusive' {
  return failed(results) ? 'fail' : inconclusive(results) ? 'inconclusive' : 'pass';
}

const RESULT_LINE = {
  fail: 'RESULT: FAIL (a rule was violated or a server could not be probed)',
  inconclusive:
    'RESULT: INCONCLUSIVE (no rule was violated, but a rule could not be decided from what the probe can see: see INCONCLUSIVE above)',
  pass: 'RESULT: PASS',
} as const;

/** "4 of 5", when fewer values went into a statistic than were taken. */
const count = (s: Measure) => (s.taken !== undefined && s.n < s.taken ? `${s.n} of ${s.taken}` : String(s.n));
/** Why a statistic has fewer values than were taken, one line per statistic. */
const whyLines = (r: TargetResult) =>
  Object.entries(r.summaries).flatMap(([name, s]) =>
    s.why !== undefined && s.taken !== undefined && s.n < s.taken ? [`${name}: ${s.n} of ${s.taken}: ${s.why}`] : [],
  );

function rules(results: readonly TargetResult[]): { rule: string; title: string }[] {
  const seen = new Map<string, string>();
  for (const r of results) for (const v of r.verdicts) if (!seen.has(v.rule)) seen.set(v.rule, v.title);
  return [...seen].map(([rule, title]) => ({ rule, title }));
}

function pad(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** The terminal summary: per server, each rule with its verdict and evidence; then the latency table. */
export function summaryText(results: readonly TargetResult[]): string {
  const out: string[] = [];
  const width = Math.max(4, ...results.flatMap((r) => r.verdicts.map((v) => MARK[v.outcome].length)));
  results.forEach((r, i) => {
    const who = r.serverInfo ? ` — ${r.serverInfo.name} ${r.serverInfo.version}` : '';
    out.push(
      `[${i + 1}] ${r.label}${who}${r.protocolVersion ? ` (protocol ${r.protocolVersion})` : r.era ? ` (era ${r.era})` : ''}`,
    );
    for (const n of r.notes ?? []) out.push(`  note  ${n}`);
    if (r.error) out.push(`  ERROR  the probe could not finish: ${r.error.split('\n').join('\n         ')}`);
    for (const v of r.verdicts) out.push(`  ${MARK[v.outcome].padEnd(width)}  ${v.rule.padEnd(28)} ${v.evidence}`);
    out.push('');
  });
  const names = Object.keys(results[0]?.summaries ?? {});
  const rows: string[][] = [['server', 'measure', 'n', 'p50', 'p90', 'p99', 'max (ms)']];
  results.forEach((r, i) => {
    for (const name of names) {
      const s = r.summaries[name];
      if (s && s.n > 0) rows.push([`[${i + 1}]`, name, count(s), fmt(s.p50), fmt(s.p90), fmt(s.p99), fmt(s.max)]);
    }
  });
  if (rows.length > 1) out.push(pad(rows), '');
  const why = results.flatMap((r, i) => whyLines(r).map((line) => `[${i + 1}] ${line}`));
  if (why.length) out.push('fewer values than samples:', ...why.map((line) => `  ${line}`), '');
  out.push(RESULT_LINE[overall(results)]);
  return out.join('\n');
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The Markdown report: the verdict matrix side by side, each server's evidence, the latency table, how to reproduce. */
export function markdownReport(
  results: readonly TargetResult[],
  options: ProbeOptions,
  command: string,
  charts: readonly string[],
): string {
  const out: string[] = ['# mcp-cancel-pool probe report', '', `Command: \`${command}\``, ''];
  out.push(
    `Long tool \`${options.tool}\` ${JSON.stringify(options.args)}, cancelled after ${options.cancelAfterMs} ms, watched ${options.settleMs} ms; ${options.samples} samples; quick tool ${options.quickTool ? `\`${options.quickTool}\` ${JSON.stringify(options.quickArgs)}` : 'none'}; ${options.storm} races; CPU threshold ${options.maxCpuAfterCancelMs} ms.`,
    '',
  );
  out.push('## Verdicts', '');
  out.push(
    `| rule | ${results.map((r, i) => `[${i + 1}]`).join(' | ')} |`,
    `|---|${results.map(() => '---').join('|')}|`,
  );
  for (const { rule, title } of rules(results)) {
    out.push(
      `| ${cell(title)} (\`${rule}\`) | ${results.map((r) => MARK[r.verdicts.find((v) => v.rule === rule)?.outcome ?? 'skip']).join(' | ')} |`,
    );
  }
  out.push('');
  results.forEach((r, i) => {
    out.push(`## [${i + 1}] ${cell(r.label)}${r.era ? ` (${r.era})` : ''}`, '');
    if (r.serverInfo)
      out.push(
        `Server: ${r.serverInfo.name} ${r.serverInfo.version}${r.protocolVersion ? `, protocol ${r.protocolVersion}` : ''}`,
        '',
      );
    if (r.error) out.push(`**The probe could not finish:** ${cell(r.error)}`, '');
    for (const v of r.verdicts) out.push(`- **${MARK[v.outcome]}** ${v.title}: ${v.evidence}`);
    out.push('', '| measure | n | p50 | p90 | p99 | max (ms) |', '|---|---|---|---|---|---|');
    for (const [name, s] of Object.entries(r.summaries))
      if (s.n > 0)
        out.push(`| ${name} | ${count(s)} | ${fmt(s.p50)} | ${fmt(s.p90)} | ${fmt(s.p99)} | ${fmt(s.max)} |`);
    out.push('');
    const why = whyLines(r);
    if (why.length) out.push('Fewer values than samples:', '', ...why.map((line) => `- ${cell(line)}`), '');
  });
  if (charts.length) out.push('## Charts', '', ...charts.map((c) => `![${c}](${c})`), '');
  out.push('## How an answer after a cancel is judged', '', ORDERING_NOTE(options.markers), '');
  return out.join('\n');
}
