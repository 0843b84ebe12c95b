/**
 * Pooling runs of scenario 3 (bench/lib/pooled-runs.ts, bench/pool-runs.ts):
 * per-run paired medians, their mean and bootstrap interval, the median of
 * every round and the rounds that went ours' way, from windows laid out as
 * results.json keeps them; and the command line on real run folders.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { poolRuns, readRun, type OverheadRun } from '../bench/lib/pooled-runs.js';
import { OVERHEAD_LABELS, type ZeroWorkWindow } from '../bench/scenarios/overhead.js';

/** One run: per round, ours' and (e)'s calls/s at 32 in flight ((e) always 100), and CPU per call at 1 in flight. */
function run(commit: string, oursCalls: number[], oursCpu: number[]): OverheadRun {
  const windows: ZeroWorkWindow[] = [];
  const win = (server: string, round: number, inFlight: number, callsPerSecond: number, serverCpuUsPerCall: number): ZeroWorkWindow => ({
    server, round, inFlight, calls: callsPerSecond, seconds: 1, callsPerSecond, serverCpuUsPerCall, clientCpuUsPerCall: 5,
  });
  oursCalls.forEach((calls, round) => {
    windows.push(win(OVERHEAD_LABELS.ours, round, 32, calls, 90), win(OVERHEAD_LABELS.coop, round, 32, 100, 90));
    windows.push(win(OVERHEAD_LABELS.ours, round, 1, 3000, oursCpu[round]!), win(OVERHEAD_LABELS.coop, round, 1, 3000, 200));
  });
  return { commit, windows };
}

const A = run('aaaaaaa', [110, 90, 104, 100], [190, 200, 210, 180]);
const B = run('bbbbbbb', [94, 96, 102, 100], [220, 210, 190, 230]);

describe('poolRuns', () => {
  const pooled = poolRuns([A, B]);
  const target = (name: string) => pooled.find((t) => t.name === name)!;

  it('pairs ours with (e) round by round: run medians, their mean, the median of all rounds, the rounds ours\' way', () => {
    const calls = target('calls/s vs (e), 32 in flight');
    expect(calls.goal).toBe('≥ 1.0×');
    expect(calls.runMedians[0]).toBeCloseTo(1.02, 10); // 0.9, 1.0, 1.04, 1.1
    expect(calls.runMedians[1]).toBeCloseTo(0.98, 10); // 0.94, 0.96, 1.0, 1.02
    expect(calls.mean).toBeCloseTo(1.0, 10);
    expect(calls.pooledMedian).toBeCloseTo(1.0, 10);
    expect([calls.oursWay, calls.rounds]).toEqual([3, 8]); // a tie (1.0) is not ours' way
  });

  it('counts a lower CPU per call as ours\' way', () => {
    const cpu = target('CPU per call vs (e), 1 in flight');
    expect(cpu.goal).toBe('≤ 1.0×');
    expect(cpu.runMedians[0]).toBeCloseTo(0.975, 10); // 0.9, 0.95, 1.0, 1.05
    expect(cpu.runMedians[1]).toBeCloseTo(1.075, 10); // 0.95, 1.05, 1.1, 1.15
    expect([cpu.oursWay, cpu.rounds]).toEqual([3, 8]);
  });

  it('resamples runs, not rounds: with two runs the 90 % interval spans their two medians', () => {
    const calls = target('calls/s vs (e), 32 in flight');
    // A resample of two runs is both of A, both of B, or one of each; each extreme has a quarter of the mass.
    expect(calls.interval[0]).toBeCloseTo(0.98, 10);
    expect(calls.interval[1]).toBeCloseTo(1.02, 10);
    expect(poolRuns([A, B])).toEqual(pooled); // seeded: the same runs give the same interval
    const one = poolRuns([A]).find((t) => t.name === 'calls/s vs (e), 32 in flight')!;
    expect(one.interval[0]).toBeCloseTo(1.02, 10);
    expect(one.interval[1]).toBeCloseTo(1.02, 10);
  });

  it('leaves out a target no run measured', () => {
    expect(pooled.map((t) => t.name)).toEqual(['calls/s vs (e), 1 in flight', 'calls/s vs (e), 32 in flight', 'CPU per call vs (e), 1 in flight', 'CPU per call vs (e), 32 in flight']);
  });
});

describe('node dist-dev/bench/pool-runs.js', () => {
  const root = mkdtempSync(join(tmpdir(), 'pool-runs-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (name: string, r: OverheadRun): string => {
    const dir = join(root, name, 'full-overhead');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'results.json'), JSON.stringify({ env: { gitCommit: `${r.commit}0123` }, scenarios: [{ id: 'overhead', samples: { windows: r.windows } }] }));
    return join(root, name);
  };
  const POOL_RUNS = fileURLToPath(new URL('../dist-dev/bench/pool-runs.js', import.meta.url));
  const cli = (args: string[]) => promisify(execFile)(process.execPath, [POOL_RUNS, ...args]);

  it('reads `--out` folders and prints the pooled targets as a table', async () => {
    const { stdout } = await cli([write('a', A), write('b', B)]);
    expect(stdout).toContain('Pooled over 2 runs (aaaaaaa, bbbbbbb)');
    expect(stdout).toContain('| calls/s vs (e), 32 in flight | ≥ 1.0× | 1.020, 0.980 | 1.000 [0.980, 1.020] | 1.000 | 3 of 8 |');
    expect(readRun(join(root, 'a')).windows).toHaveLength(16);
  });

  it('says which path has no scenario 3 in it, or which file is not JSON, and exits 1', async () => {
    mkdirSync(join(root, 'empty'));
    await expect(cli([join(root, 'empty')])).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('empty: no results.json with scenario 3 (overhead) in it') });
    await expect(cli([])).rejects.toMatchObject({ code: 2 });
    mkdirSync(join(root, 'torn'));
    writeFileSync(join(root, 'torn', 'results.json'), '{"scenarios": [');
    await expect(cli([join(root, 'torn')])).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining(`${join(root, 'torn', 'results.json')}: not a bench results file`) });
  });
});
