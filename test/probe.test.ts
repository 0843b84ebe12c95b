/**
 * `mcp-cancel-pool probe` against real server subprocesses: deliberately
 * broken fixtures (each violation must be reported, and the exit status must
 * say so) and ours (clean).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLEAN_SAMPLES, CLI } from './helpers.js';

const BROKEN = fileURLToPath(new URL('../dist-dev/test/fixtures/broken-server.js', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function probe(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, 'probe', '--no-progress', ...args],
      { timeout: 200_000 },
      (error, stdout, stderr) => {
        const code = error ? ((error as { code?: number }).code ?? null) : 0;
        resolve({ code: typeof code === 'number' ? code : null, stdout, stderr });
      },
    );
  });
}

/** Short windows: the fixture's long call runs 3 s, far past each cancel's window. */
const FAST = ['--samples', '2', '--cancel-after-ms', '150', '--settle-ms', '600', '--quiet-ms', '150', '--storm', '8'];
const brokenArgs = (mode: string, quickArgs = '{}') => [
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
  '--era',
  '2025',
  ...FAST,
];

/** The verdict word printed for a rule. */
const outcome = (stdout: string, rule: string) =>
  new RegExp(`^\\s+(PASS|FAIL|WARN|skip|INCONCLUSIVE)\\s+${rule.replace('.', '\\.')}\\s`, 'm').exec(stdout)?.[1];

/** Each case starts several processes; on a loaded 2-core machine one node start takes seconds. */
const SLOW = 240_000;

describe('probe', () => {
  it(
    'reports a server that answers cancelled calls, and exits 1',
    async () => {
      const r = await probe(brokenArgs('answers-cancelled'));
      expect(r.stdout).toMatch(/FAIL\s+cancel\.no-answer\s+2 of 2 cancelled calls were answered anyway/);
      expect(outcome(r.stdout, 'cancel.work-stops')).toBe('PASS');
      expect(r.stdout).toContain('RESULT: FAIL');
      expect(r.code).toBe(1);
    },
    SLOW,
  );

  it(
    'reports a server that ignores cancels and keeps burning CPU ("the work went on"), and exits 1',
    async () => {
      const r = await probe([...brokenArgs('burns-after-cancel'), '--max-cpu-after-cancel-ms', '100']);
      expect(r.stdout).toMatch(
        /FAIL\s+cancel\.work-stops\s+The work went on after the cancel: (the server kept using CPU|a thread of the server kept computing)/,
      );
      // It spins for the whole 600 ms window: runnable (nearly) all the time and never waiting for anything, however little CPU the load leaves it.
      expect(r.stdout).toMatch(/2 of 2 cancelled calls left a thread computing/);
      expect(outcome(r.stdout, 'cancel.no-answer')).toBe('PASS');
      expect(r.code).toBe(1);
    },
    SLOW,
  );

  it(
    'reports a server that replies to notifications, for every notification case, and exits 1',
    async () => {
      const r = await probe(brokenArgs('replies-to-notifications'));
      for (const rule of [
        'late-cancel.silent',
        'unknown-id.silent',
        'no-params.silent',
        'null-id.silent',
        'object-id.silent',
        'initialize-id.silent',
      ]) {
        expect(outcome(r.stdout, rule), rule).toBe('FAIL');
      }
      expect(outcome(r.stdout, 'cancel.no-answer')).toBe('PASS');
      expect(r.code).toBe(1);
    },
    SLOW,
  );

  it(
    'reports a server that answers cancelled calls only in races (a call cancelled in the same write answered), and exits 1',
    async () => {
      // Its quick call takes 1 s: far longer than the markers behind a cancel take to be answered, even on a loaded machine.
      const r = await probe([...brokenArgs('quick-ignores-cancel', '{"ms":1000}'), '--quiet-ms', '1500']);
      expect(outcome(r.stdout, 'cancel.no-answer')).toBe('PASS');
      expect(r.stdout).toMatch(
        /FAIL\s+race\.no-answer-after-cancel\s+8 races \(2 with the cancel in the same write as the call\): .* 2 violations \(cancelled in the same write as the call, answered [\d.]+ ms later, after all 2 markers behind it; cancelled in the same write/,
      );
      expect(r.code).toBe(1);
    },
    SLOW,
  );

  it(
    'passes the same fixture without its defect, and exits 0',
    async () => {
      const r = await probe(brokenArgs('correct'));
      expect(r.stdout).not.toMatch(/FAIL/);
      expect(r.stdout).toContain('RESULT: PASS');
      expect(r.code).toBe(0);
    },
    SLOW,
  );

  it(
    'probes ours clean over stdio, with CPU measured',
    async () => {
      const r = await probe([
        '--stdio',
        `${process.execPath} ${CLI} serve --threads 1`,
        '--era',
        '2025',
        '--tool',
        'spin',
        '--args',
        '{"ms":5000}',
        '--quick-tool',
        'spin',
        '--quick-args',
        '{"ms":3}',
        ...FAST,
        ...CLEAN_SAMPLES,
      ]);
      expect(r.stdout).not.toMatch(/FAIL|ERROR/);
      for (const rule of [
        'cancel.no-answer',
        'cancel.work-stops',
        'ping.while-running',
        'race.no-answer-after-cancel',
        'ping.after',
      ])
        expect(outcome(r.stdout, rule), rule).toBe('PASS');
      expect(r.code).toBe(0);
    },
    SLOW,
  );

  it(
    'exits 2 with a message when the server has no such tool',
    async () => {
      const r = await probe(['--stdio', `${process.execPath} ${BROKEN}`, '--tool', 'nope', ...FAST]);
      expect(r.stdout).toMatch(/ERROR\s+the probe could not finish: the server has no tool 'nope'/);
      expect(r.code).toBe(2);
    },
    SLOW,
  );

  it(
    'exits 2 when no server is given',
    async () => {
      const r = await probe(['--tool', 'x']);
      expect(r.stderr).toMatch(/give at least one --stdio/);
      expect(r.code).toBe(2);
    },
    SLOW,
  );

  it(
    "exits 2 on every argument mistake, as docs/probe.md says (not commander's 1)",
    async () => {
      const cases: [string[], RegExp][] = [
        [['--stdio', 'x', '--tool', 'x', '--bogus'], /unknown option '--bogus'/],
        [['--stdio', 'x'], /required option '--tool <name>' not specified/],
        [['--stdio', 'x', '--tool', 'x', '--era', '2027'], /argument '2027' is invalid/],
        [['--stdio', 'x', '--tool', 'x', '--samples', '0'], /expected an integer >= 1/],
        [['--stdio', 'x', '--tool', 'x', '--format', 'xml'], /Allowed choices are text, json, junit/],
      ];
      for (const [args, message] of cases) {
        const r = await probe(args);
        expect(r.stderr, args.join(' ')).toMatch(message);
        expect(r.code, args.join(' ')).toBe(2);
      }
    },
    SLOW,
  );

  it(
    '--format json and --format junit carry the same verdicts for CI',
    async () => {
      const json = await probe([...brokenArgs('answers-cancelled'), '--format', 'json']);
      expect(json.code).toBe(1);
      const doc = JSON.parse(json.stdout) as {
        result: string;
        servers: { era: string; verdicts: { rule: string; outcome: string }[] }[];
      };
      expect(doc.result).toBe('fail');
      expect(doc.servers[0]!.era).toBe('2025');
      expect(doc.servers[0]!.verdicts.find((v) => v.rule === 'cancel.no-answer')?.outcome).toBe('fail');
      expect(doc.servers[0]!.verdicts.find((v) => v.rule === 'cancel.work-stops')?.outcome).toBe('pass');
      const junit = await probe([...brokenArgs('answers-cancelled'), '--format', 'junit']);
      expect(junit.code).toBe(1);
      expect(junit.stdout).toMatch(/^<\?xml version="1.0"/);
      expect(junit.stdout).toMatch(
        /<testcase classname="[^"]+ \[2025\]" name="cancel\.no-answer: [^"]+"><failure message="2 of 2 cancelled calls were answered anyway/,
      );
      expect(junit.stdout).toMatch(/<testcase [^>]+name="cancel\.work-stops: [^"]+"><system-out>PASS: /);
      const failures = Number(/<testsuite [^>]*failures="(\d+)"/.exec(junit.stdout)?.[1]);
      expect(failures).toBe(doc.servers[0]!.verdicts.filter((v) => v.outcome === 'fail').length);
    },
    SLOW,
  );
});
