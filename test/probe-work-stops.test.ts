/**
 * How `cancel.work-stops` tells work that goes on from work that stopped, on
 * a loaded machine. It used to count thread-state samples in which *some*
 * thread of the server was runnable: with `--samples 2` and a probe starved
 * by the load, a handful of samples, each likely to catch one of a Node
 * process's dozen threads queued for a core, judged the `quick-ignores-cancel`
 * fixture (whose long tool does stop) "work did not stop". One thread's
 * runnable share alone (schedstat) was not it either: with a 90% bar
 * `burns-after-cancel` PASSed once at 83% (its thread waits for its garbage
 * collector's helpers now and then) while ours reached 62%. It now reads
 * the kernel's counts of each thread at two moments: one that keeps working
 * is runnable most of the time and rarely blocks (the spinning fixture:
 * 52 ms of CPU per blocking wait, or never); one that only wakes to answer
 * something blocks again after microseconds of work, however long it was
 * queued. Shown on
 * real processes under two CPU hogs of the test's own, and end to end on
 * the fixtures with `--samples 2`.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { busiestThread, busyOver, processTree, runnableSnapshot } from '../dist/src/probe/cpu.js';
import { keptWorking } from '../dist/src/probe/rules/work-stops.js';
import { CLI, sleep } from './helpers.js';

const BROKEN = fileURLToPath(new URL('../dist-dev/test/fixtures/broken-server.js', import.meta.url));
const FAST = [
  '--samples',
  '2',
  '--cancel-after-ms',
  '150',
  '--settle-ms',
  '600',
  '--quiet-ms',
  '150',
  '--storm',
  '8',
  '--era',
  '2025',
  '--format',
  'json',
];
const SLOW = 240_000;

interface Doc {
  servers: { verdicts: { rule: string; outcome: string; evidence: string }[] }[];
}
function probe(mode: string, quickArgs: string): Promise<Doc> {
  const args = [
    '--stdio',
    `${process.execPath} ${BROKEN} --mode ${mode}`,
    '--tool',
    'long',
    '--args',
    '{"ms":3000}',
    '--quick-tool',
    'quick',
    '--quick-args',
    quickArgs,
    ...FAST,
  ];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CLI, 'probe', '--no-progress', ...args], { timeout: 200_000 }, (error, stdout) => {
      try {
        resolve(JSON.parse(stdout) as Doc);
      } catch {
        reject(error ?? new Error(`no JSON report: ${stdout.slice(0, 200)}`));
      }
    });
  });
}
const verdict = (doc: Doc, rule: string) => doc.servers[0]!.verdicts.find((v) => v.rule === rule)!;
const keptIn = (evidence: string) =>
  /(\d+) of (\d+) cancelled calls left a thread computing/.exec(evidence)?.slice(1).map(Number);

const children: ChildProcess[] = [];
const node = (code: string) => {
  const child = spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
  children.push(child);
  return child;
};
beforeAll(() => {
  // The load: two spinning processes on a 2-core machine (on top of whatever else runs).
  node('for(;;){}');
  node('for(;;){}');
});
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

describe('cancel.work-stops under load', () => {
  it(
    'the kernel counts: a spinning thread kept working; ones woken every 20 ms or 2 ms, or idle, did not, whatever the hogs do',
    async () => {
      const ready = (code: string) => {
        const child = spawn(process.execPath, ['-e', `process.stdout.write('ready\\n'); ${code}`], {
          stdio: ['ignore', 'pipe', 'ignore'],
        });
        children.push(child);
        return new Promise<ChildProcess>((resolve) => child.stdout.once('data', () => resolve(child)));
      };
      const [spinner, every20, every2, idle] = await Promise.all([
        ready('for(;;){}'),
        ready('setInterval(() => { for (let i = 0; i < 1e4; i++); }, 20)'),
        ready('setInterval(() => { for (let i = 0; i < 1e4; i++); }, 2)'),
        ready('setInterval(() => {}, 1e6)'),
      ]);
      await sleep(1000); // past their start-up work
      expect(runnableSnapshot([spinner.pid!])).toBeDefined(); // this kernel keeps schedstat
      const from = performance.now() + 50;
      const busy = await Promise.all(
        [spinner, every20, every2, idle].map((c) => busyOver(processTree(c.pid!), from, from + 600)),
      );
      expect(busy.map(keptWorking), JSON.stringify(busy)).toEqual([true, false, false, false]);
      expect(busy[0]!.share).toBeGreaterThanOrEqual(0.6);
      expect(busy[0]!.runPerBlockMs).toBeGreaterThanOrEqual(5);
      for (const b of busy.slice(1, 3)) expect(b!.runPerBlockMs).toBeLessThan(5);
      // Two reads, however rarely the reader got to run between them: no time between them, no measure.
      const now = runnableSnapshot([spinner.pid!]);
      expect(busiestThread(now, now)).toBeUndefined();
    },
    SLOW,
  );

  it(
    '--samples 2: quick-ignores-cancel (its long tool stops) PASSes work-stops and FAILs its race rule every time; burns-after-cancel FAILs work-stops every time',
    async () => {
      for (let run = 0; run < 3; run++) {
        const quick = await probe('quick-ignores-cancel', '{"ms":30}');
        const stops = verdict(quick, 'cancel.work-stops');
        expect(stops.outcome, stops.evidence).toBe('pass');
        expect(keptIn(stops.evidence)).toEqual([0, 2]);
        expect(verdict(quick, 'race.no-answer-after-cancel').outcome).toBe('fail');
        const burns = verdict(await probe('burns-after-cancel', '{}'), 'cancel.work-stops');
        expect(burns.outcome, burns.evidence).toBe('fail');
        expect(keptIn(burns.evidence)).toEqual([2, 2]);
      }
    },
    SLOW,
  );
});
