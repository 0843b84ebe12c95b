#!/usr/bin/env node
/**
 * Before packing: deletes the declaration files no entry point's types can
 * reach. tsc writes a `.d.ts` beside every module, but a user's compiler only
 * ever reads those that the `exports` map's `types` lead to, and the ones
 * they import (`from './x.js'`, `import('./x.js')`); the rest (a third of the
 * declarations, with their TSDoc) only weighed on the install. The next
 * `npm run build` writes them all again, for the tests' type check (this
 * deletes tsc's incremental build info, which would not notice them gone).
 *
 * Run: `node scripts/prune-declarations.mjs` (prepack does, after the build).
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** Every `.d.ts` the exports map names. */
function entryDeclarations(exportsField) {
  const out = [];
  const walk = (value) => {
    if (typeof value === 'string') {
      if (value.endsWith('.d.ts')) out.push(normalize(join(root, value)));
    } else if (value && typeof value === 'object') for (const v of Object.values(value)) walk(v);
  };
  walk(exportsField);
  return out;
}

/** The declaration files reachable from `starts` through relative imports. */
function reachable(starts) {
  const seen = new Set();
  const queue = [...starts];
  while (queue.length > 0) {
    const file = queue.pop();
    if (seen.has(file)) continue;
    if (!existsSync(file)) throw new Error(`${file} is named but missing: build first (npm run build:package)`);
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(
      /(?:\bfrom\s+|\bimport\s*\(\s*|\/\/\/\s*<reference\s+path=)["'](\.{1,2}\/[^"']+)["']/g,
    )) {
      queue.push(normalize(join(dirname(file), m[1].replace(/\.js$/, '.d.ts'))));
    }
  }
  return seen;
}

function declarationsUnder(dir) {
  const out = [];
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...declarationsUnder(path));
    else if (entry.name.endsWith('.d.ts')) out.push(normalize(path));
  }
  return out;
}

const starts = entryDeclarations(manifest.exports);
if (starts.length === 0) throw new Error('package.json exports names no .d.ts');
const keep = reachable(starts);
let removed = 0;
for (const file of declarationsUnder(join(root, 'dist'))) {
  if (keep.has(file)) continue;
  rmSync(file);
  removed++;
}
// tsc --incremental re-emits only what its build info says changed, not what went missing: forget it, so that the
// next build writes every declaration again.
if (removed > 0) rmSync(join(root, 'dist', 'tsconfig.tsbuildinfo'), { force: true });
process.stderr.write(
  `prune-declarations: kept ${keep.size} declaration files the entry points reach, removed ${removed}\n`,
);
