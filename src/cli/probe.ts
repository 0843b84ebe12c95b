/**
 * `mcp-cancel-pool probe`: checks and measures how any MCP server handles
 * cancellation, in each protocol era it offers, as a real client, black-box.
 * Exit status: 0 all rules held, 1 a rule was violated, 2 a server could not
 * be probed or the arguments were wrong, 3 no rule was violated but one was
 * INCONCLUSIVE (could not be decided from what the probe can see).
 */
import { resolve } from 'node:path';
import { type Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import type { Era, ProbeOptions, TargetResult, TargetSpec } from '../probe/types.js';

/** Exit status for arguments the probe cannot run with (commander's own default would be 1, the code for "a rule was violated"). */
const EXIT_USAGE = 2;
/** Exit status when no rule was violated but one could not be decided: a CI must not read it as a pass. */
const EXIT_INCONCLUSIVE = 3;

const int =
  (min: number) =>
  (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`expected an integer >= ${min}`);
    return n;
  };
const json = (value: string): Record<string, unknown> => {
  let v: unknown;
  try {
    v = JSON.parse(value);
  } catch {
    throw new InvalidArgumentError('expected a JSON object');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new InvalidArgumentError('expected a JSON object');
  return v as Record<string, unknown>;
};
const collect = (v: string, acc: string[]) => [...acc, v];

interface ProbeFlags {
  stdio: string[];
  url: string[];
  pid: number[];
  tool: string;
  args: Record<string, unknown>;
  quickTool?: string;
  quickArgs: Record<string, unknown>;
  taskTool?: string;
  taskArgs: Record<string, unknown>;
  samples: number;
  cancelAfterMs: number;
  settleMs: number;
  quietMs: number;
  storm: number;
  markers: number;
  era: 'auto' | Era;
  format: 'text' | 'json' | 'junit';
  maxCpuAfterCancelMs: number;
  timeoutMs: number;
  connectTimeoutMs: number;
  out?: string;
  progress: boolean;
}

/** Adds the `probe` command to the CLI. */
export function registerProbe(program: Command): void {
  const cmd = program
    .command('probe')
    .description(
      'Check and measure how any MCP server handles cancellation, in each protocol era it offers (2025-11-25, 2026-07-28), as a real client. Exit 0 all rules held, 1 a rule was violated, 2 a server could not be probed or bad arguments, 3 no rule was violated but one was INCONCLUSIVE (e.g. cancel.work-stops for a tool that sends nothing after the cancel and uses too little CPU to show whether it stopped).',
    )
    .option(
      '--stdio <command>',
      'probe the server this command line starts (repeatable; quoted like a shell, run without one)',
      collect,
      [] as string[],
    )
    .option('--url <url>', 'probe a Streamable HTTP server at this URL (repeatable)', collect, [] as string[])
    .option(
      '--pid <pid>',
      'process id of the server behind the --url given in the same position: enables its CPU checks (repeatable)',
      (v: string, acc: number[]) => [...acc, int(1)(v)],
      [] as number[],
    )
    .requiredOption('--tool <name>', 'a long-running tool of the server: it is called and cancelled while it runs')
    .option(
      '--args <json>',
      'arguments for --tool (make the call last well past --cancel-after-ms + --settle-ms)',
      json,
      {},
    )
    .option(
      '--quick-tool <name>',
      'a short tool: for "cancel → next call answered", the late cancel and the race storm',
    )
    .option('--quick-args <json>', 'arguments for --quick-tool', json, {})
    .option(
      '--task-tool <name>',
      'a tool to run as a task (2025-11-25) and cancel with tasks/cancel: checks the answer, the final status and that the work stops',
    )
    .option(
      '--task-args <json>',
      'arguments for --task-tool (make the task outlast --cancel-after-ms + --settle-ms)',
      json,
      {},
    )
    .option('--samples <n>', 'cancelled long calls (each a latency and CPU sample)', int(1), 5)
    .option('--cancel-after-ms <ms>', 'how long the long call runs before the cancel', int(0), 300)
    .option('--settle-ms <ms>', 'how long after each cancel to watch for an answer and measure CPU', int(50), 1500)
    .option('--quiet-ms <ms>', 'how long to watch for a reply to each notification-only case', int(10), 300)
    .option('--storm <n>', 'complete-vs-cancel races with the quick tool', int(0), 30)
    .option(
      '--markers <n>',
      "marker requests sent one after another behind each cancel: only a message for the cancelled request that arrives after the last one's answer counts against the server",
      int(1),
      2,
    )
    .addOption(
      new Option(
        '--era <era>',
        'protocol era to probe: auto = every era the server offers (2025-11-25, 2026-07-28), each reported',
      )
        .choices(['auto', '2025', '2026'])
        .default('auto'),
    )
    .addOption(
      new Option('--format <format>', 'stdout: the text summary, or the verdicts as JSON or JUnit XML for CI')
        .choices(['text', 'json', 'junit'])
        .default('text'),
    )
    .option(
      '--max-cpu-after-cancel-ms <ms>',
      'CPU the server may burn after a cancel (median over samples) before the work counts as going on',
      int(0),
      100,
    )
    .option('--timeout-ms <ms>', 'bound on waiting for any one answer (ping, quick call)', int(100), 10_000)
    .option(
      '--connect-timeout-ms <ms>',
      'bound on opening a connection, the server process start included',
      int(100),
      60_000,
    )
    .option(
      '--out <dir>',
      'write probe.json (every sample, the environment, the command), report.md and SVG charts here',
    )
    .option('--no-progress', 'no progress bar on stderr')
    .exitOverride((error: CommanderError) => {
      // --help and --version end with 0; every argument mistake with EXIT_USAGE, as the README says.
      process.exit(error.exitCode === 0 ? 0 : EXIT_USAGE);
    })
    .action(async (flags: ProbeFlags) => {
      // Loaded only when probing: every `serve` registers this command, and must not load the MCP clients for it.
      const [
        { default: cliProgress },
        { ERAS },
        { junitReport, jsonReport },
        { writeOut },
        { overall, summaryText },
        { probeSteps, probeTarget },
        { erasOffered, targetLabel },
      ] = await Promise.all([
        import('cli-progress'),
        import('../probe/era.js'),
        import('../probe/formats.js'),
        import('../probe/out.js'),
        import('../probe/report.js'),
        import('../probe/run.js'),
        import('../probe/targets.js'),
      ]);
      if (flags.stdio.length + flags.url.length === 0)
        cmd.error('give at least one --stdio <command> or --url <url>', { exitCode: EXIT_USAGE });
      if (flags.pid.length > flags.url.length) cmd.error('each --pid goes with a --url', { exitCode: EXIT_USAGE });
      const targets: TargetSpec[] = [
        ...flags.stdio.map((command): TargetSpec => ({ kind: 'stdio', command })),
        ...flags.url.map((url, i): TargetSpec => ({
          kind: 'http',
          url,
          ...(flags.pid[i] !== undefined && { pid: flags.pid[i] }),
        })),
      ];
      const options: ProbeOptions = {
        tool: flags.tool,
        args: flags.args,
        ...(flags.quickTool !== undefined && { quickTool: flags.quickTool }),
        quickArgs: flags.quickArgs,
        ...(flags.taskTool !== undefined && { taskTool: flags.taskTool }),
        taskArgs: flags.taskArgs,
        samples: flags.samples,
        cancelAfterMs: flags.cancelAfterMs,
        settleMs: flags.settleMs,
        quietMs: flags.quietMs,
        storm: flags.storm,
        markers: flags.markers,
        maxCpuAfterCancelMs: flags.maxCpuAfterCancelMs,
        timeoutMs: flags.timeoutMs,
        connectTimeoutMs: flags.connectTimeoutMs,
      };
      const bar = new cliProgress.SingleBar(
        {
          stream: process.stderr,
          format: ' {bar} {percentage}% | {phase} | {duration_formatted}',
          hideCursor: true,
          noTTYOutput: false,
        },
        cliProgress.Presets.shades_classic,
      );
      const eraCount = flags.era === 'auto' ? 2 : 1;
      if (flags.progress)
        bar.start(
          targets.reduce((n, t) => n + eraCount * probeSteps(t, options), 0),
          0,
          { phase: 'starting' },
        );
      const progress = {
        phase: (phase: string) => flags.progress && bar.update({ phase }),
        tick: () => flags.progress && bar.increment(),
      };
      const results: TargetResult[] = [];
      const failedResult = (target: TargetSpec, error: unknown, era?: Era): TargetResult => ({
        label: targetLabel(target),
        target,
        ...(era && { era }),
        verdicts: [],
        samples: [],
        races: [],
        idlePingMs: [],
        summaries: {},
        error: error instanceof Error ? error.message : String(error),
      });
      for (const target of targets) {
        let eras: Era[];
        let notes: string[] = [];
        if (flags.era === 'auto') {
          progress.phase(`${targetLabel(target)}: which eras`);
          const offered = await erasOffered(target, options.connectTimeoutMs);
          eras = offered.eras;
          notes = offered.notes.map((n) => `not offered: ${n}`);
          if (eras.length === 0) {
            results.push(failedResult(target, `the server speaks neither era: ${offered.notes.join('; ')}`));
            continue;
          }
        } else {
          eras = [flags.era];
        }
        for (const era of eras) {
          try {
            const result = await probeTarget(target, options, progress, era);
            results.push(notes.length ? { ...result, notes } : result);
          } catch (error) {
            results.push(
              failedResult(
                target,
                `${ERAS[era].version}: ${error instanceof Error ? error.message : String(error)}`,
                era,
              ),
            );
          }
        }
      }
      if (flags.progress) bar.stop();
      const stdout =
        flags.format === 'json'
          ? jsonReport(results, options)
          : flags.format === 'junit'
            ? junitReport(results)
            : summaryText(results);
      process.stdout.write(stdout + '\n');
      if (flags.out) {
        const files = await writeOut(resolve(flags.out), results, options, process.argv.slice(2));
        process.stderr.write(`[probe] wrote ${files.join(', ')} to ${resolve(flags.out)}\n`);
      }
      const result = overall(results);
      process.exitCode = results.some((r) => r.error !== undefined)
        ? 2
        : result === 'fail'
          ? 1
          : result === 'inconclusive'
            ? EXIT_INCONCLUSIVE
            : 0;
    });
}
