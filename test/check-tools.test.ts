/**
 * `mcp-cancel-pool check-tools`, run as a subprocess on compiled tool
 * modules: it passes a tool that checks every millisecond, fails one that
 * checks only at its end (naming it and why, exit 1), takes arguments from
 * `--args` or the tool's `examples`, and speaks JSON with `--json`. The
 * fixtures' gaps (about 1 ms against a 250 ms budget, 400 ms against 100 ms)
 * are far from their budgets, so the verdicts hold on a loaded machine.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, run } from './cli-helpers.js';

const CLI = join(ROOT, 'dist/src/cli/main.js');
const GOOD = join(ROOT, 'dist-dev/test/fixtures/check-tools-good.js');
const BAD = join(ROOT, 'dist-dev/test/fixtures/check-tools-bad.js');
const GAPS = join(ROOT, 'dist-dev/test/fixtures/gap-tools.js');
const SYNC = join(ROOT, 'dist-dev/test/fixtures/check-tools-sync.js');

interface Report {
  ok: boolean;
  tools: {
    tool: string;
    ok: boolean;
    reasons: string[];
    worstGapMs: number;
    worstGapStage?: string;
    hardStops: number;
    runCapped: boolean;
    cancelToStoppedMs?: { p50: number; p99: number; max: number };
    syncSpawns: number;
  }[];
}

const checkTools = (...args: string[]) => run(process.execPath, [CLI, 'check-tools', ...args], { ms: 120_000 });

describe('check-tools', () => {
  it('passes a module whose tool checks every millisecond: exit 0, the table on stdout', async () => {
    const ran = await checkTools(GOOD);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toMatch(/^tool\tbudget ms/);
    expect(ran.stdout).toMatch(/^checks_every_ms\t250\t.*\tok$/m);
    expect(ran.stderr).not.toMatch(/FAILED/);
  }, 120_000);

  it("reports each tool's synchronous spawns (execSync, and execFileSync by a named import) with one line each; they pass otherwise", async () => {
    const ran = await checkTools(SYNC, '--json');
    expect(ran.code, ran.stderr).toBe(0);
    const report = JSON.parse(ran.stdout) as Report;
    expect(report.tools.map((t) => [t.tool, t.ok])).toEqual([
      ['exec_sync', true],
      ['exec_file_sync', true],
    ]);
    // Its run and its three cancelled runs each make one, once their stage has begun.
    for (const t of report.tools) {
      expect(t.syncSpawns).toBeGreaterThanOrEqual(1);
      expect(t.syncSpawns).toBeLessThanOrEqual(4);
    }
    for (const name of ['exec_sync', 'exec_file_sync'])
      expect(ran.stderr).toMatch(
        new RegExp(
          `check-tools: ${name} made [1-4] synchronous spawn\\(s\\) \\(execSync, execFileSync or spawnSync\\): no cancel reaches one until its program ends`,
        ),
      );
    const good = JSON.parse((await checkTools(GOOD, '--json')).stdout) as Report;
    expect(good.tools[0]!.syncSpawns).toBe(0);
  }, 240_000);

  it('fails a tool that checks only at its end, naming it, its stage and its gap; passes the other', async () => {
    const ran = await checkTools(BAD, '--json');
    expect(ran.code).toBe(1);
    const report = JSON.parse(ran.stdout) as Report;
    expect(report.ok).toBe(false);
    const [good, bad] = report.tools;
    expect(good).toMatchObject({ tool: 'checks_every_ms', ok: true, hardStops: 0, reasons: [] });
    expect(good!.cancelToStoppedMs).toBeDefined();
    expect(bad).toMatchObject({ tool: 'checks_at_end', ok: false, worstGapStage: 'work' });
    // Its example burns 400 ms with no check until the end.
    expect(bad!.worstGapMs).toBeGreaterThan(100);
    expect(bad!.reasons.join()).toMatch(
      /went \d+ ms without a cancellation check in stage 'work' \(cancelWithinMs 100\)/,
    );
    expect(ran.stderr).toMatch(/check-tools: checks_at_end FAILED: went \d+ ms without a cancellation check/);
    expect(ran.stderr).not.toMatch(/checks_every_ms FAILED/);
  }, 120_000);

  it('takes arguments from --args, fails a tool that has none, and caps the run at --max-run-ms', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'check-tools-'));
    const args = join(dir, 'args.json');
    // reads_stopped checks through ctx.stopped; async_gap has no example and is not named: no arguments.
    // 100 ms of CPU ends within the 3 s cap even when a busy machine gives it a tenth of a core; 20 s never does.
    writeFileSync(args, JSON.stringify({ reads_stopped: { ms: 100 }, checks_every_ms: { ms: 20_000 } }));
    const ran = await checkTools(GAPS, '--args', args, '--max-run-ms', '3000', '--json');
    expect(ran.code).toBe(1);
    const byName = new Map((JSON.parse(ran.stdout) as Report).tools.map((t) => [t.tool, t]));
    expect(byName.get('reads_stopped')).toMatchObject({ runCapped: false, hardStops: 0 });
    expect(byName.get('checks_every_ms')).toMatchObject({ runCapped: true, ok: true, hardStops: 0 });
    expect(byName.get('async_gap')).toMatchObject({ ok: false });
    expect(byName.get('async_gap')!.reasons.join()).toMatch(/no arguments/);
  }, 120_000);

  it('a bad --args file or --max-run-ms is one line naming it, exit 1, no stack', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'check-tools-'));
    const args = join(dir, 'args.json');
    writeFileSync(args, '[1, 2]');
    const bad = await checkTools(GOOD, '--args', args);
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim()).toMatch(
      /^\[mcp-cancel-pool\] --args .*args\.json: expected a JSON object mapping tool name/,
    );
    expect(bad.stderr).not.toMatch(/\n\s+at /);
    const cap = await checkTools(GOOD, '--max-run-ms', 'soon');
    expect(cap.code).toBe(1);
    expect(cap.stderr).toMatch(/--max-run-ms soon: expected a positive number/);
  }, 120_000);
});
