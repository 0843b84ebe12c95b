/**
 * Configuration from the environment, and the start-up mistakes that end in
 * one line: every flag also reads `MCP_CANCEL_POOL_<FLAG_IN_UPPER_SNAKE>`
 * (commander's `.env()`, shown in `--help`; the command line wins), a flag
 * given for a mode it does not apply to is refused, and errors the process
 * cannot start past (a port in use, a host that does not resolve) say the
 * cause and the fix.
 */
import { Command, type Option } from 'commander';
import { UsageError } from './usage-error.js';
import { REDIS_URL_ENV } from '../remote/config/redis-config.js';

/** The variable a flag reads: `--spare-threads` → `MCP_CANCEL_POOL_SPARE_THREADS`. */
export function envName(option: Option): string {
  return `MCP_CANCEL_POOL_${option.long!.replace(/^--/, '').replace(/-/g, '_').toUpperCase()}`;
}

/** Values a switch (a flag without a value) accepts from its variable. */
const ON = /^(1|true|yes|on)$/i;
const OFF = /^(0|false|no|off|)$/i;

/**
 * A command whose every flag reads its variable. Commander wires a flag to its
 * variable only when the flag is added, so it happens here, for flags added
 * by `.option()` and `.addOption()` alike, and for subcommands.
 */
export class EnvCommand extends Command {
  override createCommand(name?: string): EnvCommand {
    return new EnvCommand(name);
  }

  override addOption(option: Option): this {
    if (option.long && option.long !== '--help' && option.long !== '--version' && option.envVar === undefined)
      option.env(envName(option));
    return super.addOption(option);
  }
}

/**
 * For a switch (a flag without a value) commander treats any value of its
 * variable as "given", so `…_ALLOW_UNAUTHENTICATED=0` would turn it on:
 * off-values are taken out of the environment here, and anything but an
 * on-value is refused. Call before parsing.
 */
export function checkSwitchesInEnv(program: Command, env: NodeJS.ProcessEnv = process.env): void {
  for (const command of [program, ...program.commands]) {
    for (const option of command.options as Option[]) {
      const name = option.envVar;
      const value = name === undefined ? undefined : env[name];
      if (name === undefined || value === undefined || option.required || option.optional) continue;
      if (OFF.test(value)) delete env[name];
      else if (!ON.test(value))
        throw new UsageError(`${name}=${value}: expected 1 or 0 (true/false) for the switch ${option.long}`);
    }
  }
}

/** One rule: `flags` need `when` to hold; `why` says what they apply to. */
interface Rule {
  readonly flags: readonly string[];
  readonly when: (values: Record<string, unknown>) => boolean;
  readonly why: string;
}

const HTTP_ONLY = [
  '--host',
  '--port',
  '--session-idle-ms',
  '--allowed-host',
  '--allowed-origin',
  '--max-sessions',
  '--max-sessions-per-caller',
  '--session-prefix',
  '--auth-token-file',
  '--allow-unauthenticated',
  '--health-auth',
  '--auth-issuer',
  '--auth-resource',
  '--auth-scopes',
  '--auth-introspection-endpoint',
  '--auth-client-credentials-file',
  '--auth-any-jwt-type',
  '--auth-require-at-jwt',
  '--auth-operator-scope',
  '--queue-limit-per-caller',
];
// --queue-limit is not here: with --redis it bounds the calls a front end keeps waiting on the queue.
const LOCAL_POOL = [
  '--threads',
  '--spare-threads',
  '--cores',
  '--handoff-delay-ms',
  '--grace-ms',
  '--worker-memory-mb',
  '--root',
];

/** Whether the flags (or the environment) give a Redis URL: then serve runs on the queue backend. */
const onRedis = (v: Record<string, unknown>): boolean =>
  v.redis !== undefined ||
  v.redisUrlFile !== undefined ||
  v.redisSentinels !== undefined ||
  !!process.env[REDIS_URL_ENV];
const onSentinel = (v: Record<string, unknown>): boolean => v.redisSentinels !== undefined;
const SENTINEL_ONLY: Rule = {
  flags: ['--redis-sentinel-name', '--redis-sentinel-password-file'],
  when: onSentinel,
  why: 'applies with --redis-sentinels only',
};

const SERVE_RULES: readonly Rule[] = [
  { flags: HTTP_ONLY, when: (v) => v.transport === 'http', why: 'applies to --transport http only' },
  {
    flags: ['--max-output-buffer-bytes', '--health-port', '--health-host'],
    when: (v) => v.transport !== 'http',
    why: 'applies to stdio only (HTTP serves /healthz, /readyz and /metrics on its own port)',
  },
  { flags: ['--on-stdin-close'], when: (v) => v.transport !== 'http', why: 'applies to stdio only' },
  {
    flags: ['--drain-timeout-ms'],
    when: (v) => v.transport !== 'http' && v.onStdinClose === 'finish',
    why: 'applies with --on-stdin-close finish only (stdio)',
  },
  {
    flags: LOCAL_POOL,
    when: (v) => !onRedis(v),
    why: 'sets the local pool; with --redis the worker hosts run the calls: give it to `mcp-cancel-pool worker`',
  },
  {
    flags: ['--queue', '--redis-ca-file', '--cluster-key-file'],
    when: onRedis,
    why: `applies with a Redis URL only (--redis, --redis-url-file, ${REDIS_URL_ENV} or --redis-sentinels)`,
  },
  SENTINEL_ONLY,
  { flags: ['--health-host'], when: (v) => v.healthPort !== undefined, why: 'applies with --health-port only' },
  {
    flags: ['--health-auth'],
    when: (v) => v.authTokenFile !== undefined || process.env.MCP_CANCEL_POOL_AUTH_TOKEN !== undefined,
    why: 'needs a token (--auth-token-file or MCP_CANCEL_POOL_AUTH_TOKEN)',
  },
];

const WORKER_RULES: readonly Rule[] = [
  { flags: ['--health-host'], when: (v) => v.healthPort !== undefined, why: 'applies with --health-port only' },
  SENTINEL_ONLY,
];

/**
 * Refuses a flag given on the command line for a mode it does not apply to.
 * One set by its variable only is left alone: an environment is often shared
 * by processes of several modes.
 */
export function refuseInapplicable(command: Command): void {
  const rules = command.name() === 'serve' ? SERVE_RULES : command.name() === 'worker' ? WORKER_RULES : [];
  const values = command.opts();
  for (const rule of rules) {
    if (rule.when(values)) continue;
    for (const flag of rule.flags) {
      const option = (command.options as Option[]).find((o) => o.long === flag);
      if (option && command.getOptionValueSource(option.attributeName()) === 'cli')
        throw new UsageError(`${flag} ${rule.why}`);
    }
  }
}

/** `[::1]` (as copied from a URL) → `::1`; what listen() takes. */
export function hostArg(value: string): string {
  const bracketed = /^\[(.+)\]$/.exec(value.trim());
  return bracketed ? bracketed[1]! : value.trim();
}

/** One line for an error the process cannot start past, or undefined for one it does not know. */
export function startupErrorLine(error: unknown): string | undefined {
  const e = error as {
    code?: string;
    syscall?: string;
    address?: string;
    port?: number;
    hostname?: string;
    message?: string;
  };
  const at =
    e.address !== undefined
      ? `${e.address.includes(':') ? `[${e.address}]` : e.address}${e.port !== undefined ? `:${e.port}` : ''}`
      : undefined;
  switch (e.code) {
    case 'EADDRINUSE':
      return `cannot listen on ${at ?? 'that address'}: the port is in use (EADDRINUSE); stop what uses it, or pick another port (--port or --health-port; 0 = any free port)`;
    case 'EACCES':
      return `cannot listen on ${at ?? 'that address'}: permission denied (EACCES); ports below 1024 need privileges: pick a port >= 1024`;
    case 'EADDRNOTAVAIL':
      return `cannot listen on ${at ?? 'that address'}: no interface of this machine has that address (EADDRNOTAVAIL); use 127.0.0.1, 0.0.0.0 or one of its addresses`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot listen on host ${e.hostname ?? ''}: it does not resolve (${e.code}); use an IP address or a name this machine resolves`;
    default:
      return undefined;
  }
}
