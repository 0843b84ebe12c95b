/** The Markdown report and the plain-text summary, from the scenario results. */
import type { Environment } from '../lib/env.js';
import type { ScenarioResult, Table, Target } from '../lib/scenario.js';

export function markdownTable(t: Table): string {
  const esc = (v: string | number) => String(v).replace(/\|/g, '\\|');
  const lines = [
    `| ${t.columns.map(esc).join(' | ')} |`,
    `| ${t.columns.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`,
    ...t.rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ];
  return lines.join('\n');
}

export function targetsTable(targets: readonly Target[]): Table {
  return {
    title: 'Targets',
    columns: ['target', 'goal', 'measured', 'met'],
    rows: targets.map((t) => [t.name, t.goal, t.measured, t.met ? 'yes' : '**no**']),
  };
}

export interface ReportInput {
  readonly env: Environment;
  readonly loadAvgAtEnd: readonly number[];
  readonly quick: boolean;
  readonly command: string;
  readonly totalMs: number;
  readonly results: readonly ScenarioResult[];
}

export function markdownReport(input: ReportInput): string {
  const { env, results } = input;
  const out: string[] = [];
  out.push(`# Benchmark report (${input.quick ? 'quick smoke run' : 'full run'})`, '');
  out.push(
    `Command: \`${input.command}\` — ${(input.totalMs / 1000).toFixed(0)} s in all, started ${env.startedAt}.`,
    '',
  );
  out.push(
    markdownTable({
      title: 'Environment',
      columns: ['', ''],
      rows: [
        ['Node', `${env.node} (V8 ${env.v8})`],
        ['CPU', `${env.cpus} × ${env.cpuModel} (available parallelism ${env.availableParallelism})`],
        ['Memory', `${env.totalMemMb} MiB`],
        ['OS', `${env.platform} ${env.arch}`],
        [
          'Load average (1, 5, 15 min) at start / end',
          `${env.loadAvgAtStart.map((l) => l.toFixed(2)).join(' ')} / ${input.loadAvgAtEnd.map((l) => l.toFixed(2)).join(' ')}`,
        ],
        ['Node flags', [...env.execArgv, env.nodeOptions ?? ''].join(' ').trim() || 'none'],
        ['Commit', `${env.gitCommit ?? 'unknown'}${env.gitDirty ? ' (work tree had uncommitted changes)' : ''}`],
      ],
    }),
    '',
  );
  const targets = results.flatMap((r) => r.targets);
  if (targets.length) out.push('## Targets', '', markdownTable(targetsTable(targets)), '');
  for (const r of results) {
    out.push(`## ${r.title}`, '', r.method, '');
    out.push('Servers:', '', ...r.servers.map((s) => `- ${s.label}: \`${s.command}\``), '');
    for (const t of r.tables) {
      out.push(`**${t.title}**`, '', markdownTable(t), '');
      if (t.note) out.push(t.note, '');
    }
    for (const c of r.charts) out.push(`![${c.title}](${c.file}.svg)`, '');
    if (r.durationMs !== undefined) out.push(`_Scenario time: ${(r.durationMs / 1000).toFixed(1)} s._`, '');
  }
  return out.join('\n');
}

/** A plain-text table for the terminal. */
export function textTable(t: Table): string {
  const cells = [t.columns.map(String), ...t.rows.map((r) => r.map((v) => String(v).replace(/\*\*/g, '')))];
  const widths = t.columns.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [t.title, line(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join(
    '\n',
  );
}
