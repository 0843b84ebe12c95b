/**
 * The HTTP scenarios (8–10) from the real command, quick: every server
 * starts and answers in both eras it speaks, each window and sample counts
 * what it says it counts, and the targets are there. It asserts what the run
 * decided (which windows, rows and figures exist, the counts, no failed
 * calls), never a speed.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import type { HttpWindow } from '../bench/scenarios/http-overhead.js';
import type { HttpCancelSample } from '../bench/scenarios/http-cancel.js';
import type { MemoryFigures } from '../bench/scenarios/http-memory.js';

const BENCH = fileURLToPath(new URL('../dist-dev/bench/main.js', import.meta.url));
const out = mkdtempSync(join(tmpdir(), 'bench-http-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

interface Scenario {
  id: string;
  targets: { name: string; met: boolean }[];
  samples: Record<string, unknown>;
}

it('bench --quick --only http-overhead,http-cancel,http-memory: every server, era and load measured, successes counted, targets reported', () => {
  const run = spawnSync(
    process.execPath,
    [BENCH, '--quick', '--only', 'http-overhead,http-cancel,http-memory', '--out', out],
    { encoding: 'utf8', timeout: 400_000 },
  );
  expect(run.status, run.stderr.slice(-1500)).toBe(0);
  const { scenarios } = JSON.parse(
    readFileSync(join(out, 'quick-http-overhead+http-cancel+http-memory', 'results.json'), 'utf8'),
  ) as { scenarios: Scenario[] };
  const of = (id: string) => scenarios.find((s) => s.id === id)!;

  // 8: ours, (f), (g) in 2026 at 1, 32, 256 clients; those and fastmcp in 2025 at 1 and 32 (quick).
  const windows = of('http-overhead').samples.windows as HttpWindow[];
  const key = (w: HttpWindow) => `${w.server.slice(0, 4)}|${w.era}|${w.clients}`;
  expect(new Set(windows.map(key)).size).toBe(3 * 3 + 4 * 2);
  expect(windows).toHaveLength(17);
  for (const w of windows) {
    expect(w.failures, key(w)).toBe(0);
    expect(w.calls, key(w)).toBeGreaterThanOrEqual(w.clients > 1 ? w.clients : 1); // every caller was answered at least once
    if (w.clients === 1) expect(w.p50Ms, key(w)).toBeGreaterThan(0);
  }
  expect(of('http-overhead').targets.map((t) => t.name)).toContain('HTTP 2026 zero-work calls/s vs (f), 256 clients');
  expect(of('http-overhead').targets.map((t) => t.name)).toContain(
    'HTTP 2025 server CPU per call vs (h) fastmcp, 32 clients',
  );

  // 9: every row has both modes, and none was left out for an unanswered B or a call never stopped.
  const cancel = of('http-cancel').samples as { samples: HttpCancelSample[]; misses: Record<string, unknown> };
  expect(cancel.misses).toEqual({});
  const rows = ['ours-2026', 'f-2026', 'g-2026', 'ours-2025', 'f-2025', 'g-2025', 'h-2025'];
  for (const row of rows)
    for (const mode of ['reused', 'stopped', 'idle'])
      expect(
        cancel.samples.some((s) => s.row === row && s.mode === mode),
        `${row} ${mode}`,
      ).toBe(true);
  expect(of('http-cancel').targets.map((t) => t.name)).toEqual([
    'Cancel → slot reused over HTTP, 2026 closed stream: p50 vs (f)',
  ]);

  // 10: each server's sessions and calls in flight, read from /proc.
  const figures = (of('http-memory').samples as { figures: MemoryFigures[] }).figures;
  expect(figures).toHaveLength(4);
  for (const f of figures) {
    expect(f.sessions?.count, f.server).toBe(32);
    expect(f.inFlight?.count, f.server).toBe(32);
    expect(f.sessions!.beforeKb, f.server).toBeGreaterThan(0);
  }
  expect(of('http-memory').targets).toHaveLength(6);
}, 420_000);
