/**
 * `cancel.work-stops` against its own evidence, end to end: a server whose
 * long tool waits in sleeps and ignores the cancel (test/fixtures/
 * sleeping-server.ts, an SDK 1.x `McpServer` like server-everything's). CPU
 * cannot see that work. With progress sent through the server after the
 * cancel, the progress proves the work went on: FAIL, exit 1 (the probe once
 * said PASS here while another rule warned about the same progress). Without
 * progress nothing can tell: INCONCLUSIVE, exit 3, in the text, the JSON and
 * the JUnit report, and no other rule fails.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLI } from './helpers.js';

const SLEEPING = fileURLToPath(new URL('../dist-dev/test/fixtures/sleeping-server.js', import.meta.url));
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
];
const SLOW = 240_000;

function probe(args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, 'probe', '--no-progress', ...args], { timeout: 200_000 }, (error, stdout) => {
      const code = error ? (error as { code?: number }).code : 0;
      resolve({ code: typeof code === 'number' ? code : null, stdout });
    });
  });
}
const sleeping = (args: string, ...more: string[]) =>
  probe([
    '--stdio',
    `${process.execPath} ${SLEEPING}`,
    '--tool',
    'sleep',
    '--args',
    args,
    '--quick-tool',
    'quick',
    ...FAST,
    ...more,
  ]);
const outcome = (stdout: string, rule: string) =>
  new RegExp(`^\\s+(PASS|FAIL|WARN|skip|INCONCLUSIVE)\\s+${rule.replace('.', '\\.')}\\s`, 'm').exec(stdout)?.[1];

interface Doc {
  result: string;
  servers: { verdicts: { rule: string; outcome: string; evidence: string }[] }[];
}

describe('cancel.work-stops, a tool that waits', () => {
  it(
    'sleeps, sends progress through the server and ignores the cancel: FAIL with the progress quoted, though its CPU stays low; exit 1',
    async () => {
      const r = await sleeping('{"ms":5000}');
      expect(outcome(r.stdout, 'cancel.work-stops')).toBe('FAIL');
      expect(r.stdout).toMatch(
        /FAIL\s+cancel\.work-stops\s+The work went on after the cancel: the server sent progress for 2 of 2 cancelled calls after it had read the cancel .*first [\d.]+ ms after the cancel, progress: \{(?:"jsonrpc":"2.0",)?"method":"notifications\/progress","params":\{"progressToken":"probe-progress-/,
      );
      expect(outcome(r.stdout, 'cancel.no-answer')).toBe('PASS');
      expect(outcome(r.stdout, 'cancel.no-further-messages')).toBe('WARN');
      expect(r.code).toBe(1);
    },
    SLOW,
  );

  it(
    'the same without progress: INCONCLUSIVE (an uncancelled call uses almost no CPU), exit 3, in text, JSON and JUnit; nothing else fails',
    async () => {
      const quiet = '{"ms":5000,"progress":false}';
      const text = await sleeping(quiet);
      expect(text.stdout).toMatch(
        /INCONCLUSIVE\s+cancel\.work-stops\s+Cannot tell whether the work stopped: nothing arrived for the 2 cancelled calls after the server had read the cancel, but the tool uses too little CPU for CPU to show it \(an uncancelled call kept \d+% of a core busy/,
      );
      expect(text.stdout).toContain('RESULT: INCONCLUSIVE');
      expect(text.stdout).not.toMatch(/FAIL|ERROR/);
      expect(text.code).toBe(3);
      const json = await sleeping(quiet, '--format', 'json');
      const doc = JSON.parse(json.stdout) as Doc;
      expect(doc.result).toBe('inconclusive');
      expect(doc.servers[0]!.verdicts.filter((v) => v.outcome !== 'pass').map((v) => `${v.rule} ${v.outcome}`)).toEqual(
        ['cancel.work-stops inconclusive'],
      );
      expect(json.code).toBe(3);
      const junit = await sleeping(quiet, '--format', 'junit');
      expect(junit.stdout).toMatch(
        /<testcase [^>]+name="cancel\.work-stops: [^"]+"><skipped message="INCONCLUSIVE: Cannot tell whether the work stopped/,
      );
      expect(junit.stdout).toMatch(/<testsuite [^>]*failures="0" errors="0" skipped="1">/);
      expect(junit.code).toBe(3);
    },
    SLOW,
  );
});
