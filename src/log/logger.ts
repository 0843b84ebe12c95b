/**
 * The server's own stderr lines (never the MCP channel: stdout is stdio's),
 * through one small logger: a level (`--log-level`) and a format
 * (`--log-format text|json`). A line written while a call is being handled
 * carries that call's trace and span ids, read from the active OpenTelemetry
 * context (only while an SDK is registered). Text lines read as they always
 * have: `[mcp-cancel-pool] message`, any fields after it as `key=value`.
 */
import { context, trace } from '@opentelemetry/api';

/** Severity, lowest first. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];
/** How lines are written. */
export type LogFormat = 'text' | 'json';
/** Extra fields on a line (absent values are left out). */
export type LogFields = Readonly<Record<string, string | number | boolean | undefined>>;

/** Options for {@link Logger}. */
export interface LoggerOptions {
  /** @default 'info' */
  readonly level?: LogLevel;
  /** @default 'text' */
  readonly format?: LogFormat;
  /** Who writes: the text prefix (`[name]`) and the JSON `name`. @default 'mcp-cancel-pool' */
  readonly name?: string;
  /** Where a finished line goes. @default process.stderr */
  readonly write?: (line: string) => void;
}

/** Writes the server's own lines at or above its level, as text or JSON (see the module comment). */
export class Logger {
  readonly level: LogLevel;
  readonly format: LogFormat;
  readonly name: string;
  /** Whether debug lines are written (read on every request: a field, not a look-up). */
  readonly debugOn: boolean;
  private readonly min: number;
  private readonly write: (line: string) => void;

  constructor(options: LoggerOptions = {}) {
    this.level = options.level ?? 'info';
    this.format = options.format ?? 'text';
    this.name = options.name ?? 'mcp-cancel-pool';
    this.min = LOG_LEVELS.indexOf(this.level);
    this.debugOn = this.min === 0;
    this.write = options.write ?? ((line) => void process.stderr.write(line));
  }

  /** Whether lines of `level` are written (check before building an expensive one). */
  enabled(level: LogLevel): boolean {
    return LOG_LEVELS.indexOf(level) >= this.min;
  }

  /** A line for debugging (one per request, say). */
  debug(message: string, fields?: LogFields): void {
    this.log('debug', message, fields);
  }

  /** What the server is doing (listening, shutting down). */
  info(message: string, fields?: LogFields): void {
    this.log('info', message, fields);
  }

  /** Something the operator should look at; the server goes on. */
  warn(message: string, fields?: LogFields): void {
    this.log('warn', message, fields);
  }

  /** Something failed. */
  error(message: string, fields?: LogFields): void {
    this.log('error', message, fields);
  }

  /** The same logger under another name (a worker host's lines). */
  named(name: string): Logger {
    return new Logger({ level: this.level, format: this.format, name, write: this.write });
  }

  /** Writes one line of `level`, with the active call's trace and span ids when there is one. */
  log(level: LogLevel, message: string, fields?: LogFields): void {
    if (LOG_LEVELS.indexOf(level) < this.min) return;
    const all: Record<string, string | number | boolean> = {};
    // The API alone (no SDK, no src/otel/): with none registered the active context holds no span.
    const span = trace.getSpanContext(context.active());
    if (span) {
      all.trace_id = span.traceId;
      all.span_id = span.spanId;
    }
    for (const [k, v] of Object.entries(fields ?? {})) if (v !== undefined) all[k] = v;
    if (this.format === 'json') {
      this.write(
        `${JSON.stringify({ time: new Date().toISOString(), level, name: this.name, msg: message, ...all })}\n`,
      );
      return;
    }
    const extra = Object.entries(all)
      .map(([k, v]) => ` ${k}=${typeof v === 'string' && /[\s"=]/.test(v) ? JSON.stringify(v) : String(v)}`)
      .join('');
    this.write(`[${this.name}] ${message}${extra}\n`);
  }
}

let current = new Logger();

/** The process's logger (the CLI configures it from --log-level and --log-format). */
export function logger(): Logger {
  return current;
}

/** Replaces the process's logger. */
export function setLogger(next: Logger): void {
  current = next;
}
