/** `--out DIR`: every sample as JSON, the Markdown report and SVG charts. */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import os from 'node:os';
import { missingPeers } from '../peers.js';
import { markdownReport } from './report.js';
import { median } from './stats.js';
import type { ProbeOptions, TargetResult } from './types.js';

/** What the results depend on, recorded with them. */
export function environment(argv: readonly string[]) {
  return {
    node: process.version,
    platform: `${os.type()} ${os.release()}`,
    arch: process.arch,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    totalMemMb: Math.round(os.totalmem() / 2 ** 20),
    loadAvgAtStart: os.loadavg(),
    argv: [...argv],
    startedAt: new Date().toISOString(),
  };
}

async function charts(results: readonly TargetResult[], dir: string): Promise<string[]> {
  // Loaded only here: rendering pulls in Vega, an optional peer nothing else needs. Without it the report and the
  // JSON are still written, and one line says what to install for the charts.
  const missing = missingPeers(['vega', 'vega-lite']);
  if (missing) {
    process.stderr.write(
      `[probe] no charts: they need ${missing.packages.join(' and ')} (optional, not installed with mcp-cancel-pool): ${missing.install}\n`,
    );
    return [];
  }
  const lib = await import('./charts.js');
  const name = (r: TargetResult, i: number) => `[${i + 1}] ${r.label.slice(0, 60)}`;
  const valid = (r: TargetResult) => r.samples.filter((s) => !s.finishedBeforeCancel);
  const specs: [string, Parameters<typeof lib.renderSvg>[0]][] = [
    [
      'next-call-cdf.svg',
      lib.cdfChart(
        'cancel → next call answered',
        results.map((r, i) => ({
          label: name(r, i),
          values: valid(r).flatMap((s) => (s.nextCallMs !== undefined ? [s.nextCallMs] : [])),
        })),
      ),
    ],
    [
      'ping-while-running-cdf.svg',
      lib.cdfChart(
        'ping round trip while the long tool runs',
        results.map((r, i) => ({ label: name(r, i), values: valid(r).flatMap((s) => s.pingWhileRunningMs) })),
      ),
    ],
    [
      'cpu-after-cancel.svg',
      lib.barChart(
        'CPU burned after the cancel',
        results.flatMap((r, i) => {
          const cpu = valid(r).flatMap((s) => (s.cpuAfterCancelMs !== undefined ? [s.cpuAfterCancelMs] : []));
          return cpu.length
            ? [
                { group: name(r, i), series: 'median', value: median(cpu) },
                { group: name(r, i), series: 'max', value: Math.max(...cpu) },
              ]
            : [];
        }),
        'CPU ms (process tree)',
        'server',
      ),
    ],
  ];
  const written: string[] = [];
  for (const [file, spec] of specs) {
    await writeFile(join(dir, file), await lib.renderSvg(spec));
    written.push(file);
  }
  return written;
}

/** Writes probe.json, report.md and the charts into `dir`; returns the files written. */
export async function writeOut(
  dir: string,
  results: readonly TargetResult[],
  options: ProbeOptions,
  argv: readonly string[],
): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const command = ['mcp-cancel-pool', ...argv]
    .map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`))
    .join(' ');
  const svgs = await charts(results, dir);
  // Infinity (still busy at the end of the window) has no JSON form: write it as a string.
  const json = JSON.stringify(
    { command, environment: environment(argv), options, results },
    (_k, v: unknown) => (v === Number.POSITIVE_INFINITY ? 'Infinity' : v),
    2,
  );
  await writeFile(join(dir, 'probe.json'), json);
  await writeFile(join(dir, 'report.md'), markdownReport(results, options, command, svgs));
  return ['probe.json', 'report.md', ...svgs];
}
