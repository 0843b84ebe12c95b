/**
 * The benchmark's --check: the exit code follows the targets of the run
 * (1 if any is missed, 0 if all are met), read back from the run's own
 * results.json. One short scenario, from the real command.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';

const BENCH = fileURLToPath(new URL('../dist-dev/bench/main.js', import.meta.url));
const out = mkdtempSync(join(tmpdir(), 'bench-check-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

it('bench --check exits 1 when a target of the run is missed and 0 when all are met; without --check, 0 either way', () => {
  const run = (args: string[]) =>
    spawnSync(process.execPath, [BENCH, '--quick', '--only', 'tasks-cancel', '--out', out, ...args], {
      encoding: 'utf8',
      timeout: 240_000,
    });
  const checked = run(['--check']);
  const { scenarios } = JSON.parse(readFileSync(join(out, 'quick-tasks-cancel', 'results.json'), 'utf8')) as {
    scenarios: { targets: { name: string; met: boolean }[] }[];
  };
  const targets = scenarios.flatMap((s) => s.targets);
  expect(targets.length).toBeGreaterThan(0);
  const missed = targets.filter((t) => !t.met);
  expect(checked.status, checked.stderr.slice(-800)).toBe(missed.length > 0 ? 1 : 0);
  expect(checked.stderr).toMatch(
    missed.length > 0
      ? new RegExp(`--check: ${missed.length} of ${targets.length} targets missed: `)
      : new RegExp(`--check: all ${targets.length} targets met`),
  );
  const plain = run([]);
  expect(plain.status, plain.stderr.slice(-800)).toBe(0);
  expect(plain.stderr).not.toMatch(/--check:/);
}, 300_000);
