/**
 * Puts the scenarios of a partial run (`--only …`) into a full run's
 * results: their entries in results.json, their sections of report.md and
 * their SVGs replace the old ones, the targets table is rebuilt from every
 * scenario, and the report says which sections came from which run. For
 * re-running what a change touched without repeating the whole 12 minutes.
 *
 *   node dist-dev/bench/report/splice.js <partial run dir> [full run dir: bench/results/full]
 */
import { copyFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ScenarioResult } from '../lib/scenario.js';
import { markdownTable, targetsTable } from './markdown.js';

interface Run {
  readonly env: { readonly gitCommit?: string; readonly gitDirty?: boolean; readonly startedAt: string };
  readonly command: string;
  readonly scenarios: ScenarioResult[];
  spliced?: {
    readonly ids: readonly string[];
    readonly command: string;
    readonly commit?: string;
    readonly dirty?: boolean;
    readonly startedAt: string;
  }[];
}

/** The report's `## <title>` section, up to the next one. */
function section(md: string, title: string): { start: number; end: number } | undefined {
  const start = md.indexOf(`\n## ${title}\n`);
  if (start === -1) return undefined;
  const next = md.indexOf('\n## ', start + 1);
  return { start, end: next === -1 ? md.length : next };
}

const [partialDir, fullDir = 'bench/results/full'] = process.argv.slice(2);
if (!partialDir) throw new Error('usage: splice <partial run dir> [full run dir]');
const partial = JSON.parse(await readFile(join(partialDir, 'results.json'), 'utf8')) as Run;
const full = JSON.parse(await readFile(join(fullDir, 'results.json'), 'utf8')) as Run;
const partialMd = await readFile(join(partialDir, 'report.md'), 'utf8');
let md = await readFile(join(fullDir, 'report.md'), 'utf8');

for (const s of partial.scenarios) {
  const i = full.scenarios.findIndex((f) => f.id === s.id);
  const old = i === -1 ? undefined : section(md, full.scenarios[i]!.title);
  const fresh = section(partialMd, s.title);
  if (!fresh) throw new Error(`${partialDir}/report.md has no section '${s.title}'`);
  const text = partialMd.slice(fresh.start, fresh.end);
  md = old ? md.slice(0, old.start) + text + md.slice(old.end) : md + text;
  if (i === -1) full.scenarios.push(s);
  else full.scenarios[i] = s;
}
const ids = partial.scenarios.map((s) => s.id);
full.spliced = [
  ...(full.spliced ?? []),
  {
    ids,
    command: partial.command,
    commit: partial.env.gitCommit,
    dirty: partial.env.gitDirty,
    startedAt: partial.env.startedAt,
  },
];

const targets = section(md, 'Targets');
if (targets)
  md = `${md.slice(0, targets.start)}\n## Targets\n\n${markdownTable(targetsTable(full.scenarios.flatMap((s) => s.targets)))}\n${md.slice(targets.end)}`;
const note = full.spliced
  .map(
    (s) =>
      `${s.ids.join(', ')}: re-run with \`${s.command}\` at ${s.commit ?? 'unknown'}${s.dirty ? ' (uncommitted changes)' : ''}, started ${s.startedAt}.`,
  )
  .join(' ');
md = md.replace(
  /\n\n(Sections taken from later partial runs:[^\n]*\n\n)?\| {2}\| {2}\|/,
  `\n\nSections taken from later partial runs: ${note}\n\n|  |  |`,
);

for (const f of await readdir(partialDir))
  if (f.endsWith('.svg')) await copyFile(join(partialDir, f), join(fullDir, f));
await writeFile(join(fullDir, 'results.json'), JSON.stringify(full));
await writeFile(join(fullDir, 'report.md'), md);
process.stderr.write(`spliced ${ids.join(', ')} into ${fullDir}\n`);
