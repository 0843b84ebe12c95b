/**
 * How `cancel.work-stops` tells work that goes on from work that stopped, on
 * a loaded machine. It used to count thread-state samples in which *some*
 * thread of the server was runnable: with `--samples 2` and a probe starved
 * by the load, a handful of samples, each likely to catch one of a Node
 * process's dozen threads queued for a core, judged the `quick-ignores-cancel`
 * fixture (whose long tool does stop) "work did not stop". It now reads the
 * kernel's run and run-queue time of each thread (schedstat) at two moments:
 * a spinning thread is runnable all the time between them, however little
 * of a core it gets; one that sleeps between wake-ups is not. Shown on real
 * processes under two CPU hogs of the test's own, and end to end on the
 * fixtures with `--samples 2`.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { busiestThreadShare, processTree, runnableShareOver, runnableSnapshot } from '../dist/src/probe/cpu.js';
import { CLI, sleep } from './helpers.js';

const BROKEN = fileURLToPath(new URL('../dist/test/fixtures/broken-server.js', import.meta.url));
const FAST = ['--samples', '2', '--cancel-after-ms', '150', '--settle-ms', '600', '--quiet-ms', '150', '--storm', '8', '--era', '2025', '--format', 'json'];
const SLOW = 240_000;

interface Doc {
  servers: { verdicts: { rule: string; outcome: string; evidence: string }[] }[];
}
function probe(mode: string, quickArgs: string): Promise<Doc> {
  const args = ['--stdio', `${process.execPath} ${BROKEN} --mode ${mode}`, '--tool', 'long', '--args', '{"ms":3000}', '--quick-tool', 'quick', '--quick-args', quickArgs, ...FAST];
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
const shareIn = (evidence: string) => Number(/its busiest thread runnable (\d+)% of the time/.exec(evidence)?.[1]);

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
  it('the kernel count: a spinning process is runnable nearly all the time, one woken by a 20 ms timer is not, whatever the hogs do', async () => {
    const spinner = node('for(;;){}');
    const waker = node('setInterval(() => { for (let i = 0; i < 1e4; i++); }, 20)');
    await sleep(500); // both started
    expect(runnableSnapshot([spinner.pid!])).toBeDefined(); // this kernel keeps schedstat
    const from = performance.now() + 50;
    const [spinning, waking] = await Promise.all([runnableShareOver(processTree(spinner.pid!), from, from + 600), runnableShareOver(processTree(waker.pid!), from, from + 600)]);
    expect(spinning).toBeGreaterThanOrEqual(0.9);
    expect(waking).toBeLessThan(0.9);
    // Two reads, however rarely the reader got to run between them: no time between them, no share.
    const now = runnableSnapshot([spinner.pid!]);
    expect(busiestThreadShare(now, now)).toBeUndefined();
  }, SLOW);

  it('--samples 2: quick-ignores-cancel (its long tool stops) PASSes work-stops and FAILs its race rule every time; burns-after-cancel FAILs work-stops every time', async () => {
    for (let run = 0; run < 3; run++) {
      const quick = await probe('quick-ignores-cancel', '{"ms":30}');
      const stops = verdict(quick, 'cancel.work-stops');
      expect(stops.outcome, stops.evidence).toBe('pass');
      expect(shareIn(stops.evidence)).toBeLessThan(90);
      expect(verdict(quick, 'race.no-answer-after-cancel').outcome).toBe('fail');
      const burns = verdict(await probe('burns-after-cancel', '{}'), 'cancel.work-stops');
      expect(burns.outcome, burns.evidence).toBe('fail');
      expect(shareIn(burns.evidence)).toBeGreaterThanOrEqual(90);
    }
  }, SLOW);
});
