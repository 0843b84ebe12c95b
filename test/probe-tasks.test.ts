/**
 * The probe's tasks rules (2025-11-25 tasks, `--task-tool`): ours cancels a
 * running task at once and its work stops; a fixture that answers
 * `tasks/cancel` with `cancelled` but keeps working FAILs `tasks.work-stops`.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLI } from './helpers.js';
import { TASK_TOOLS } from './task-wire.js';

const BROKEN = fileURLToPath(new URL('../dist-dev/test/fixtures/broken-server.js', import.meta.url));
const FAST = [
  '--era',
  '2025',
  '--samples',
  '1',
  '--storm',
  '0',
  '--cancel-after-ms',
  '150',
  '--settle-ms',
  '600',
  '--format',
  'json',
];
const SLOW = 240_000;

interface Doc {
  servers: { verdicts: { rule: string; outcome: string; evidence: string }[] }[];
}
function probe(args: string[]): Promise<{ code: number | null; doc: Doc }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, 'probe', '--no-progress', ...args], { timeout: 200_000 }, (error, stdout) => {
      const code = error ? (error as { code?: number }).code : 0;
      resolve({ code: typeof code === 'number' ? code : null, doc: JSON.parse(stdout) as Doc });
    });
  });
}
const verdict = (doc: Doc, rule: string) => doc.servers[0]!.verdicts.find((v) => v.rule === rule);

describe('probe, tasks', () => {
  it(
    'ours: tasks/cancel answered cancelled, tasks/get says cancelled right after and later, the work stops; exit 0',
    async () => {
      const { code, doc } = await probe([
        '--stdio',
        `${process.execPath} ${CLI} serve --threads 1 --tools ${TASK_TOOLS}`,
        '--tool',
        'spin',
        '--args',
        '{"ms":5000}',
        '--task-tool',
        'only_task',
        '--task-args',
        '{"ms":8000}',
        ...FAST,
      ]);
      expect(verdict(doc, 'tasks.cancel')).toMatchObject({
        outcome: 'pass',
        evidence: expect.stringMatching(/with status cancelled/),
      });
      expect(verdict(doc, 'tasks.ends-cancelled')).toMatchObject({
        outcome: 'pass',
        evidence: 'tasks/get right after: cancelled; 600 ms later: cancelled',
      });
      expect(verdict(doc, 'tasks.work-stops')?.outcome).toBe('pass');
      expect(code).toBe(0);
    },
    SLOW,
  );

  it(
    'a server whose tasks/cancel only flips the status while the work goes on: FAIL tasks.work-stops, exit 1; without the defect it passes',
    async () => {
      const args = (mode: string) => [
        '--stdio',
        `${process.execPath} ${BROKEN} --mode ${mode}`,
        '--tool',
        'long',
        '--args',
        '{"ms":3000}',
        '--task-tool',
        'long',
        '--task-args',
        '{"ms":4000}',
        ...FAST,
      ];
      const bad = await probe(args('task-burns-after-cancel'));
      expect(verdict(bad.doc, 'tasks.cancel')?.outcome).toBe('pass');
      expect(verdict(bad.doc, 'tasks.work-stops')).toMatchObject({
        outcome: 'fail',
        evidence: expect.stringMatching(
          /^The work went on after the cancel: .*the busiest thread was runnable \(running or waiting for a core\) \d+% of the time, (never waiting|[\d.]+ ms of CPU between waits)/,
        ),
      });
      expect(bad.code).toBe(1);
      const good = await probe(args('correct'));
      expect(verdict(good.doc, 'tasks.work-stops')?.outcome).toBe('pass');
      expect(good.code).toBe(0);
    },
    SLOW,
  );
});
