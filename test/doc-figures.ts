/**
 * The install figures the docs quote (README.md, docs/install.md), kept in
 * docs/figures.json: what test/packaging.test.ts measured from a packed
 * tarball and its install into an empty project. That test checks its run
 * against the file and, run with `FIGURES=write`, records its run there;
 * test/docs-figures.test.ts checks that the pages quote the file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const FILE = join(fileURLToPath(new URL('..', import.meta.url)), 'docs/figures.json');

/** The figures, as measured. */
export interface Figures {
  /** Where the numbers come from, for a reader of the file. */
  about: string;
  /** The day of the run that recorded them. */
  measured: string;
  /** `npm install <tarball>` into an empty project: packages in node_modules, and `du -sk node_modules`. */
  defaultInstall: { packages: number; kilobytes: number };
  /** Bytes of the .tgz that `npm pack` writes. */
  tarballBytes: number;
}

export const readFigures = (): Figures => JSON.parse(readFileSync(FILE, 'utf8')) as Figures;

/** `FIGURES=write`: put this run's measurement in the file (the docs then need the new numbers). */
export const recording = process.env.FIGURES === 'write';

export function recordFigures(patch: Partial<Omit<Figures, 'about' | 'measured'>>): void {
  const next = { ...readFigures(), ...patch, measured: new Date().toISOString().slice(0, 10) };
  writeFileSync(FILE, `${JSON.stringify(next, null, 2)}\n`);
}

/** The tarball may grow or shrink this much (a doc edit changes it) before the recorded size is stale. */
export const TARBALL_TOLERANCE = 0.02;

/** How the pages write them: `25 packages, 28 MB` (`du -sm` rounds up) and `410 KB now`. */
export function quoted(f: Figures): { install: string; tarball: string } {
  return {
    install: `${f.defaultInstall.packages} packages, ${Math.ceil(f.defaultInstall.kilobytes / 1024)} MB`,
    tarball: `${Math.round(f.tarballBytes / 1000)} KB now`,
  };
}
