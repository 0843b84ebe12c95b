/**
 * `npm run bench`: runs the scenarios from this (client) process against real
 * server processes, then writes every sample and the environment as JSON, a
 * Markdown report with SVG charts, and prints a short summary.
 *
 *   node dist-dev/bench/main.js [--quick] [--check] [--out bench/results] [--only cancel-latency,overhead]
 *
 * With --check it exits 1 when a target is missed (0 otherwise): for a run on
 * a quiet machine; the targets are speed ratios, which a busy neighbour moves.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { environment } from './lib/env.js';
import { Progress } from './lib/progress.js';
import type { Scenario, ScenarioResult } from './lib/scenario.js';
import { renderSvg } from '#dist/src/probe/charts.js';
import { markdownReport, targetsTable, textTable } from './report/markdown.js';
import { cancelLatency } from './scenarios/cancel-latency.js';
import { overhead } from './scenarios/overhead.js';
import { overheadPaired } from './scenarios/overhead-paired.js';
import { responsiveness } from './scenarios/responsiveness.js';
import { cancelStorm } from './scenarios/storm.js';
import { tasksCancel } from './scenarios/tasks-cancel.js';
import { crossHost } from './scenarios/cross-host.js';
import { httpOverhead } from './scenarios/http-overhead.js';
import { httpCancel } from './scenarios/http-cancel.js';
import { httpMemory } from './scenarios/http-memory.js';

const SCENARIOS: readonly Scenario[] = [
  cancelLatency,
  overhead,
  overheadPaired,
  cancelStorm,
  responsiveness,
  tasksCancel,
  crossHost,
  httpOverhead,
  httpCancel,
  httpMemory,
];

interface Flags {
  quick?: boolean;
  check?: boolean;
  out: string;
  only?: string;
  rows?: string;
  unpinned?: boolean;
}

const program = new Command()
  .name('bench')
  .description('Cancellation latency, overhead, cancel storms and responsiveness, against the baselines.')
  .option('--quick', 'a smoke run: few samples, short windows (55–70 s of CPU)')
  .option('--check', 'exit 1 if any target is missed (exit 0 otherwise); the report is written either way')
  .option('--out <dir>', 'where results go (a subfolder per run kind)', 'bench/results')
  .option('--only <ids>', `comma-separated scenarios: ${SCENARIOS.map((s) => s.id).join(', ')}`)
  .option(
    '--unpinned',
    'overhead, overhead-paired: no taskset; the client and the servers run where the OS puts them, as a deployed server does',
  )
  .option(
    '--rows <keys>',
    'comma-separated configuration keys: only those rows of the scenarios that have them (cancel-latency: e.g. ours-stdio-2026-1-coop,sdk2-piscina-stdio-2026-1)',
  )
  .action(async (flags: Flags) => {
    const wanted = flags.only?.split(',').map((s) => s.trim());
    const rows = flags.rows
      ?.split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0);
    const unknown = wanted?.filter((w) => !SCENARIOS.some((s) => s.id === w));
    if (unknown?.length) throw new Error(`unknown scenario(s): ${unknown.join(', ')}`);
    const chosen = SCENARIOS.filter((s) => !wanted || wanted.includes(s.id));
    const quick = flags.quick === true;
    const dir = resolve(
      flags.out,
      `${quick ? 'quick' : 'full'}${wanted ? `-${wanted.join('+')}` : ''}${rows ? '-rows' : ''}${flags.unpinned ? '-unpinned' : ''}`,
    );
    await mkdir(dir, { recursive: true });

    const env = environment();
    // Print each kind of warning once (the SDK's HTTP client trips MaxListenersExceededWarning thousands of times); count them all.
    const warnings: Record<string, number> = {};
    process.removeAllListeners('warning');
    process.on('warning', (w) => {
      warnings[w.name] = (warnings[w.name] ?? 0) + 1;
      if (warnings[w.name] === 1)
        process.stderr.write(`\r\x1b[Kwarning (shown once, counted in results.json): ${w.name}: ${w.message}\n`);
    });
    const progress = new Progress();
    const log = (line: string) => process.stderr.write(`\r\x1b[K${line}\n`);
    const started = performance.now();
    progress.start(chosen.reduce((n, s) => n + s.estimateMs(quick), 0));
    const results: ScenarioResult[] = [];
    try {
      for (const scenario of chosen) {
        progress.phase(scenario.id);
        const t0 = performance.now();
        const result = await scenario.run({
          quick,
          progress,
          log,
          ...(rows && { rows }),
          ...(flags.unpinned && { unpinned: true }),
        });
        result.durationMs = performance.now() - t0;
        results.push(result);
      }
    } finally {
      progress.stop();
    }
    const totalMs = performance.now() - started;
    const loadAvgAtEnd = loadavg();

    for (const r of results)
      for (const c of r.charts) await writeFile(join(dir, `${c.file}.svg`), await renderSvg(c.spec));
    const command = `node dist-dev/bench/main.js ${process.argv.slice(2).join(' ')}`.trim();
    await writeFile(
      join(dir, 'results.json'),
      JSON.stringify({
        env,
        loadAvgAtEnd,
        warnings,
        quick,
        command,
        totalMs,
        scenarios: results.map(({ charts: _c, ...r }) => r),
      }),
    );
    await writeFile(join(dir, 'report.md'), markdownReport({ env, loadAvgAtEnd, quick, command, totalMs, results }));

    const out: string[] = [''];
    for (const r of results) if (r.headline) out.push(textTable(r.headline), '');
    const targets = results.flatMap((r) => r.targets);
    if (targets.length) out.push(textTable(targetsTable(targets)), '');
    out.push(
      `${(totalMs / 1000).toFixed(1)} s. Report: ${join(dir, 'report.md')}; samples: ${join(dir, 'results.json')}`,
    );
    process.stderr.write(out.join('\n') + '\n');
    const missed = targets.filter((t) => !t.met);
    if (flags.check && missed.length > 0) {
      process.stderr.write(
        `--check: ${missed.length} of ${targets.length} targets missed: ${missed.map((t) => t.name).join('; ')}\n`,
      );
      process.exitCode = 1;
    } else if (flags.check) process.stderr.write(`--check: all ${targets.length} targets met\n`);
  });

program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
