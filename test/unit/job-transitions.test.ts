/**
 * The local job's moves, pinned to the table: every compare-exchange the job
 * (src/executor/job.ts), the slab's cancel and the worker's claim
 * (src/state/job-state.ts) make is an edge of `JOB_EDGES`, every edge is made
 * by one of them, and nothing else in src/ or workers/ writes a state word.
 * Reads the sources, so a new CAS that is not an edge fails here, named.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { JOB_EDGES } from '../../dist/src/state/job-state.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const EDGES = JOB_EDGES.map((e) => `${e.from} → ${e.to}`);

/** `from → to` of every `transition(<slot>, JobState.from, JobState.to)` in `text`. */
function transitions(text: string): string[] {
  return [...text.matchAll(/\btransition\(\s*[^,]+,\s*JobState\.(\w+),\s*JobState\.(\w+)\s*\)/g)].map(
    (m) => `${m[1]} → ${m[2]}`,
  );
}

/** The body of `name` (a function or method) in `text`, up to its closing brace at the same indentation. */
function body(text: string, name: RegExp): string {
  const m = name.exec(text);
  if (!m) throw new Error(`no ${String(name)}`);
  const indent = /^\s*/.exec(text.slice(text.lastIndexOf('\n', m.index) + 1))![0];
  const end = text.indexOf(`\n${indent}}`, m.index);
  return text.slice(m.index, end);
}

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((e) => {
    const p = join(dir, e);
    return statSync(join(ROOT, p)).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe("the local job's compare-exchanges are the table's edges", () => {
  const job = read('src/executor/job.ts');
  const state = read('src/state/job-state.ts');
  const inJob = transitions(job);
  const inSlabCancel = transitions(body(state, /^ {2}tryCancel\(ref: SlotRef\)/m));
  // The worker's claim builds its `responding` word from its `running` word: running → responding.
  const claim = body(state, /^export function claimResponse\(/m);

  it('finds the moves (the parser sees them)', () => {
    expect(inJob.length).toBeGreaterThanOrEqual(5);
    expect(inSlabCancel).toEqual(['queued → cancelled', 'running → cancelled']);
    expect(claim).toMatch(/slot\.runningWord & ~STATE_MASK\) \| JobState\.responding/);
  });

  it('every CAS in job.ts is an edge of JOB_EDGES', () => {
    expect(inJob.filter((t) => !EDGES.includes(t))).toEqual([]);
  });

  it('the job cancels only through the slab (whose cancel is two edges), never by a word of its own', () => {
    expect(job).toMatch(/host\.slab\.tryCancel\(this\.slot\)/);
    expect(job).not.toMatch(/Atomics\./);
  });

  it('every edge of JOB_EDGES is taken by one of them: none is dead', () => {
    const taken = new Set([...inJob, ...inSlabCancel, 'running → responding']);
    expect(EDGES.filter((e) => !taken.has(e))).toEqual([]);
  });

  it("nothing in src/ or workers/ but job-state.ts compare-exchanges a word (child-cells.ts: its own cells' table)", () => {
    const writers = [...sources('src'), ...sources('workers')]
      .filter((f) => /Atomics\.compareExchange/.test(readFileSync(join(ROOT, f), 'utf8')))
      .map((f) => relative(ROOT, join(ROOT, f)));
    // A job's child pid cells are another machine, drawn in child-cells.ts and checked by test/unit/child-cells.test.ts.
    expect(writers).toEqual(['src/state/child-cells.ts', 'src/state/job-state.ts']);
  });
});
