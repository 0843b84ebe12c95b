/** `--log-level` and `--log-format` for `serve` and `worker`: the server's own stderr lines (src/log/logger.ts). */
import { Option, type Command } from 'commander';
import { Logger, LOG_LEVELS, setLogger, type LogFormat, type LogLevel } from '../log/logger.js';

/** Adds both options to `command`; returns it. */
export function logOptions<C extends Command>(command: C): C {
  command.addOption(
    new Option(
      '--log-level <level>',
      "the server's own stderr lines at this level and above (debug adds a line per request, with its trace id when tracing)",
    )
      .choices([...LOG_LEVELS])
      .default('info'),
  );
  command.addOption(
    new Option(
      '--log-format <format>',
      'text, or json: one JSON object per line (time, level, name, msg, trace_id and span_id on the lines of a call)',
    )
      .choices(['text', 'json'])
      .default('text'),
  );
  return command;
}

/** Sets the process's logger from the flags; Node's own warnings (a worker error, say) go through it too. */
export function configureLogging(
  flags: { readonly logLevel: LogLevel; readonly logFormat: LogFormat },
  name: string,
): Logger {
  const log = new Logger({ level: flags.logLevel, format: flags.logFormat, name });
  setLogger(log);
  // Node prints warnings to stderr in its own format; a JSON log needs them as JSON lines, and both need the level.
  process.removeAllListeners('warning');
  process.on('warning', (warning) =>
    log.warn(warning.message, {
      warning: warning.name,
      ...((warning as { code?: string }).code !== undefined && { code: (warning as { code?: string }).code }),
    }),
  );
  return log;
}
