/**
 * Pooling runs of scenario 3 and the HTTP scenarios 8–10
 * (bench/lib/pooled-runs.ts, bench/pool-runs.ts): per-run paired medians,
 * their mean and bootstrap interval, the median of every round, the rounds
 * that went ours' way and the verdict, from samples laid out as results.json
 * keeps them; and the command line on real run folders.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { poolRuns, readRun, verdict, type BenchRun } from '../bench/lib/pooled-runs.js';
import { HTTP_LABELS, type HttpWindow } from '../bench/scenarios/http-overhead.js';
import type { HttpCancelSample } from '../bench/scenarios/http-cancel.js';
import { OVERHEAD_LABELS, type ZeroWorkWindow } from '../bench/scenarios/overhead.js';

/** One run: per round, ours' and (e)'s calls/s at 32 in flight ((e) always 100), and CPU per call at 1 in flight. */
function run(commit: string, oursCalls: number[], oursCpu: number[]): BenchRun {
  const windows: ZeroWorkWindow[] = [];
  const win = (
    server: string,
    round: number,
    inFlight: number,
    callsPerSecond: number,
    serverCpuUsPerCall: number,
  ): ZeroWorkWindow => ({
    server,
    round,
    inFlight,
    calls: callsPerSecond,
    seconds: 1,
    callsPerSecond,
    serverCpuUsPerCall,
    clientCpuUsPerCall: 5,
  });
  oursCalls.forEach((calls, round) => {
    windows.push(win(OVERHEAD_LABELS.ours, round, 32, calls, 90), win(OVERHEAD_LABELS.coop, round, 32, 100, 90));
    windows.push(
      win(OVERHEAD_LABELS.ours, round, 1, 3000, oursCpu[round]!),
      win(OVERHEAD_LABELS.coop, round, 1, 3000, 200),
    );
  });
  return { commit, windows };
}

const A = run('aaaaaaa', [110, 90, 104, 100], [190, 200, 210, 180]);
const B = run('bbbbbbb', [94, 96, 102, 100], [220, 210, 190, 230]);

describe('poolRuns', () => {
  const pooled = poolRuns([A, B]);
  const target = (name: string) => pooled.find((t) => t.name === name)!;

  it("pairs ours with (e) round by round: run medians, their mean, the median of all rounds, the rounds ours' way", () => {
    const calls = target('calls/s vs (e), 32 in flight');
    expect(calls.goal).toBe('≥ 1.0×');
    expect(calls.runMedians[0]).toBeCloseTo(1.02, 10); // 0.9, 1.0, 1.04, 1.1
    expect(calls.runMedians[1]).toBeCloseTo(0.98, 10); // 0.94, 0.96, 1.0, 1.02
    expect(calls.mean).toBeCloseTo(1.0, 10);
    expect(calls.pooledMedian).toBeCloseTo(1.0, 10);
    expect([calls.oursWay, calls.rounds]).toEqual([3, 8]); // a tie (1.0) is not ours' way
  });

  it("counts a lower CPU per call as ours' way", () => {
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
    expect(pooled.map((t) => t.name)).toEqual([
      'calls/s vs (e), 1 in flight',
      'calls/s vs (e), 32 in flight',
      'CPU per call vs (e), 1 in flight',
      'CPU per call vs (e), 32 in flight',
    ]);
  });

  it('says "level" while the interval contains the threshold, else met or missed by the mean\'s side', () => {
    expect(target('calls/s vs (e), 32 in flight').verdict).toBe('level'); // [0.98, 1.02]
    expect(verdict(1.1, [1.05, 1.2], 1, true)).toBe('met');
    expect(verdict(0.9, [0.85, 0.95], 1, true)).toBe('missed');
    expect(verdict(0.9, [0.85, 0.95], 1, false)).toBe('met');
    expect(verdict(30, [24, 36], 25, true)).toBe('level');
  });
});

/** One HTTP run: per round, ours' and (f)'s 2026 calls/s at 32 clients; a cancel figure; a memory figure. */
function httpRun(
  commit: string,
  oursCalls: number[],
  cancel: { ours: number[]; f: number[] },
  perSession: { ours: number; f: number },
): BenchRun {
  const win = (server: string, round: number, callsPerSecond: number): HttpWindow => ({
    server,
    era: '2026',
    clients: 32,
    round,
    calls: callsPerSecond,
    failures: 0,
    seconds: 1,
    callsPerSecond,
    serverCpuUsPerCall: 500,
    clientCpuUsPerCall: 50,
  });
  const httpWindows = oursCalls.flatMap((calls, round) => [
    win(HTTP_LABELS.ours, round, calls),
    win(HTTP_LABELS.f, round, 100),
  ]);
  const httpCancel: HttpCancelSample[] = [
    ...cancel.ours.map((ms) => ({ row: 'ours-2026', mode: 'reused' as const, ms })),
    ...cancel.f.map((ms) => ({ row: 'f-2026', mode: 'reused' as const, ms })),
    { row: 'ours-2026', mode: 'stopped', ms: 1000 }, // another mode: not in the ratio
  ];
  const httpMemory = [
    { server: HTTP_LABELS.ours, sessions: { count: 1000, beforeKb: 0, afterKb: 0, perSessionKb: perSession.ours } },
    { server: HTTP_LABELS.f, sessions: { count: 1000, beforeKb: 0, afterKb: 0, perSessionKb: perSession.f } },
  ];
  return { commit, httpWindows, httpCancel, httpMemory };
}

describe('poolRuns on the HTTP scenarios', () => {
  const runs = [
    httpRun('ccccccc', [120, 130, 125], { ours: [2, 2, 4], f: [60, 64, 70] }, { ours: 40, f: 200 }),
    httpRun('ddddddd', [110, 140, 90], { ours: [2, 3, 3], f: [60, 60, 60] }, { ours: 50, f: 200 }),
  ];
  const pooled = poolRuns(runs);
  const target = (name: string) => pooled.find((t) => t.name === name)!;

  it('pairs ours with (f) round by round in one era at one load', () => {
    const calls = target('HTTP 2026 calls/s vs (f), 32 clients');
    expect(calls.goal).toBe('≥ 1.0×');
    expect(calls.runMedians[0]).toBeCloseTo(1.25, 10);
    expect(calls.runMedians[1]).toBeCloseTo(1.1, 10);
    expect([calls.oursWay, calls.rounds]).toEqual([5, 6]);
    expect(calls.verdict).toBe('met');
  });

  it("takes one figure per run from the cancel samples: (f)'s p50 over ours', against 25×", () => {
    const cancel = target('HTTP 2026 cancel → slot reused p50, (f) ÷ ours (closed stream)');
    expect(cancel.goal).toBe('≥ 25×');
    expect(cancel.runMedians).toEqual([32, 20]); // 64 / 2, 60 / 3
    expect([cancel.oursWay, cancel.rounds]).toEqual([1, 2]);
    expect(cancel.interval).toEqual([20, 32]);
    expect(cancel.verdict).toBe('level');
  });

  it('takes ours ÷ the baseline per idle session from the memory figures, and leaves out what no run measured', () => {
    const memory = target('HTTP RSS per idle 2025 session vs (f)');
    expect(memory.runMedians).toEqual([0.2, 0.25]);
    expect(memory.verdict).toBe('met');
    expect(pooled.some((t) => t.name === 'HTTP RSS per call in flight vs (f)')).toBe(false);
    // A figure not above 0 (a collection fell between the reads) gives no ratio.
    const noisy = httpRun('fffffff', [100], { ours: [2], f: [50] }, { ours: -5, f: 200 });
    expect(poolRuns([noisy]).some((t) => t.name === 'HTTP RSS per idle 2025 session vs (f)')).toBe(false);
    expect(pooled.some((t) => t.name.includes('(g)'))).toBe(false);
  });
});

describe('node dist-dev/bench/pool-runs.js', () => {
  const root = mkdtempSync(join(tmpdir(), 'pool-runs-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (name: string, r: BenchRun): string => {
    const dir = join(root, name, 'full-overhead');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'results.json'),
      JSON.stringify({
        env: { gitCommit: `${r.commit}0123` },
        scenarios: [{ id: 'overhead', samples: { windows: r.windows } }],
      }),
    );
    return join(root, name);
  };
  const POOL_RUNS = fileURLToPath(new URL('../dist-dev/bench/pool-runs.js', import.meta.url));
  const cli = (args: string[]) => promisify(execFile)(process.execPath, [POOL_RUNS, ...args]);

  it('reads `--out` folders and prints the pooled targets as a table', async () => {
    const { stdout } = await cli([write('a', A), write('b', B)]);
    expect(stdout).toContain('Pooled over 2 runs (aaaaaaa, bbbbbbb)');
    expect(stdout).toContain(
      '| calls/s vs (e), 32 in flight | ≥ 1.0× | 1.020, 0.980 | 1.000 [0.980, 1.020] | 1.000 | 3 of 8 | level |',
    );
    expect(readRun(join(root, 'a')).windows).toHaveLength(16);
  });

  it('reads the HTTP scenarios beside scenario 3 from the subfolders of one `--out` folder', async () => {
    const r = httpRun('eeeeeee', [120, 130], { ours: [2], f: [64] }, { ours: 40, f: 200 });
    const dir = join(root, 'http');
    mkdirSync(join(dir, 'full-http-overhead+http-cancel+http-memory'), { recursive: true });
    writeFileSync(
      join(dir, 'full-http-overhead+http-cancel+http-memory', 'results.json'),
      JSON.stringify({
        env: { gitCommit: 'eeeeeee0123' },
        scenarios: [
          { id: 'http-overhead', samples: { windows: r.httpWindows } },
          { id: 'http-cancel', samples: { samples: r.httpCancel } },
          { id: 'http-memory', samples: { figures: r.httpMemory } },
        ],
      }),
    );
    const both = readRun(dir);
    expect([both.httpWindows?.length, both.httpCancel?.length, both.httpMemory?.length, both.windows]).toEqual([
      4,
      3,
      2,
      undefined,
    ]);
    const { stdout } = await cli([dir]);
    expect(stdout).toContain(
      '| HTTP 2026 cancel → slot reused p50, (f) ÷ ours (closed stream) | ≥ 25× | 32.000 | 32.000 [32.000, 32.000] | 32.000 | 1 of 1 | met |',
    );
  });

  it('says which path has no scenario 3 in it, or which file is not JSON, and exits 1', async () => {
    mkdirSync(join(root, 'empty'));
    await expect(cli([join(root, 'empty')])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining(
        'empty: no results.json with scenario 3 (overhead) or 8–10 (http-overhead, http-cancel, http-memory) in it',
      ),
    });
    await expect(cli([])).rejects.toMatchObject({ code: 2 });
    mkdirSync(join(root, 'torn'));
    writeFileSync(join(root, 'torn', 'results.json'), '{"scenarios": [');
    await expect(cli([join(root, 'torn')])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`${join(root, 'torn', 'results.json')}: not a bench results file`),
    });
  });
});
