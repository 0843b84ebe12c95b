/**
 * The server's own stderr lines (never the MCP channel: stdout is stdio's),
 * through one small logger: a level (`--log-level`) and a format
 * (`--log-format text|json`). A line written while a call is being handled
 * carries that call's trace and span ids, read from the active OpenTelemetry
 * context (only while an SDK is registered). Text lines read as they always
 * have: `[mcp-cancel-pool] message`, any fields after it as `key=value`.
 *
 * Messages and fields carry values from the wire (tool names, ids, methods, reasons, client info), so no line is
 * the client's to shape: in text, every control character is written escaped (`\n`, `\x1b`, `\u2028`, …), so one
 * call is one line and no escape sequence reaches a terminal; in JSON, what JSON.stringify leaves raw (DEL, the C1
 * controls, U+2028/2029, bidi overrides) is escaped too. Both formats cap a message and each field's length.
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

/** Longest message and field value written; a longer one is cut and says how much was left out. */
export const LOG_MESSAGE_CAP = 4096;
export const LOG_FIELD_CAP = 512;

/** Control characters, line and paragraph separators, and bidi overrides: never written raw. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const hex = (c: string, width: number) => c.charCodeAt(0).toString(16).padStart(width, '0');
/** `c` written as an escape: `\n`, `\x1b`, `\u2028`. */
const escapeChar = (c: string) => NAMED[c] ?? (c.charCodeAt(0) <= 0xff ? `\\x${hex(c, 2)}` : `\\u${hex(c, 4)}`);

/** `value` cut to `cap` characters, saying how many were left out. */
export function capped(value: string, cap: number): string {
  return value.length <= cap ? value : `${value.slice(0, cap)}…[+${value.length - cap} chars]`;
}

/** `value` with every control character escaped (see the module comment) and its length capped. */
export function escapeForLog(value: string, cap: number = LOG_FIELD_CAP): string {
  return capped(value, cap).replace(UNSAFE, escapeChar);
}

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
    for (const [k, v] of Object.entries(fields ?? {}))
      if (v !== undefined) all[k] = typeof v === 'string' ? capped(v, LOG_FIELD_CAP) : v;
    const msg = capped(message, LOG_MESSAGE_CAP);
    if (this.format === 'json') {
      const line = JSON.stringify({ time: new Date().toISOString(), level, name: this.name, msg, ...all });
      // JSON.stringify escapes C0 controls only; the rest of UNSAFE as \uXXXX (still the same JSON string).
      this.write(`${line.replace(UNSAFE, (c) => `\\u${hex(c, 4)}`)}\n`);
      return;
    }
    const extra = Object.entries(all)
      .map(([k, v]) => {
        if (typeof v !== 'string') return ` ${k}=${String(v)}`;
        const text = v.replace(UNSAFE, escapeChar);
        return ` ${k}=${/[ "=]/.test(text) ? `"${text.replace(/"/g, '\\"')}"` : text}`;
      })
      .join('');
    this.write(`[${this.name}] ${msg.replace(UNSAFE, escapeChar)}${extra}\n`);
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
