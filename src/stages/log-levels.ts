/** MCP log levels, shared by the worker (which must not load the SDK's schemas) and the server. */
import type { LoggingLevel } from '@modelcontextprotocol/server';

export type { LoggingLevel };

/** Every level, least severe first (RFC 5424 order, as in the MCP spec); a level's index is its severity. */
export const LOGGING_LEVELS = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const satisfies readonly LoggingLevel[];

/** Severity of `level`, or undefined if it is not an MCP level. */
export function severityOf(level: unknown): number | undefined {
  const i = (LOGGING_LEVELS as readonly unknown[]).indexOf(level);
  return i < 0 ? undefined : i;
}

/** Severity of `error`: messages at or above it have their own budget, so chatty debug output cannot starve them. */
export const ERROR_SEVERITY = 4;

/** Fails to compile if the SDK ever adds a level this list lacks. */
const complete: [Exclude<LoggingLevel, (typeof LOGGING_LEVELS)[number]>] extends [never] ? true : false = true;
void complete;
