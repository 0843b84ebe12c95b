/** Top-level `--help` also lists the options of `serve`, the command nearly everyone runs. */
import type { Command } from 'commander';

/** Appends the help of `serve` to the top-level help of `program` (call after `serve` is defined). */
export function listServeOptionsInHelp(program: Command): void {
  program.addHelpText('after', () => {
    const serve = program.commands.find((c) => c.name() === 'serve');
    return serve ? `\nmcp-cancel-pool serve:\n${serve.helpInformation().replace(/^(?=.)/gm, '  ')}` : '';
  });
}
