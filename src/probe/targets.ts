/** Connecting a real SDK client to the server under test, over stdio (a command the probe starts) or Streamable HTTP. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import stringArgv from 'string-argv';
import type { TargetSpec } from './types.js';
import { Wire } from './wire.js';

/** A connected server. */
export interface Connected {
  readonly spec: TargetSpec;
  readonly client: Client;
  readonly wire: Wire;
  readonly transport: Transport;
  /** The process whose CPU the probe can read (the stdio child, or the `--pid` of an HTTP server). */
  readonly pid: number | undefined;
  /** The last few KB of the server's stderr (stdio only), to explain a server that went away. */
  stderrTail(): string;
  /** Whether the connection closed without the probe closing it. */
  readonly lost: () => boolean;
  close(): Promise<void>;
}

/** A short name for tables: the command or the URL. */
export function targetLabel(spec: TargetSpec): string {
  return spec.kind === 'stdio' ? spec.command : spec.url;
}

/** Splits a `--stdio` command line into the program and its arguments (shell-style quoting, no shell). */
export function parseCommand(line: string): [string, ...string[]] {
  const argv = stringArgv(line);
  if (argv.length === 0) throw new Error('empty --stdio command');
  return argv as [string, ...string[]];
}

export async function connect(spec: TargetSpec, timeoutMs: number): Promise<Connected> {
  let transport: Transport;
  let tail = '';
  if (spec.kind === 'stdio') {
    const [command, ...args] = parseCommand(spec.command);
    const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
    const stdio = new StdioClientTransport({ command, args, env, stderr: 'pipe' });
    stdio.stderr?.on('data', (d: Buffer) => (tail = (tail + d.toString('utf8')).slice(-4096)));
    transport = stdio;
  } else {
    transport = new StreamableHTTPClientTransport(new URL(spec.url));
  }
  const wire = new Wire(transport);
  const client = new Client({ name: 'mcp-cancel-pool-probe', version: '1.0.0' });
  let closing = false;
  let lost = false;
  client.onclose = () => {
    if (!closing) lost = true;
  };
  client.onerror = () => undefined; // recorded on the wire
  await client.connect(transport, { timeout: timeoutMs });
  const pid = spec.kind === 'stdio' ? ((transport as StdioClientTransport).pid ?? undefined) : spec.pid;
  return {
    spec,
    client,
    wire,
    transport,
    pid,
    stderrTail: () => tail,
    lost: () => lost,
    close: async () => {
      closing = true;
      if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => undefined);
      await client.close().catch(() => undefined);
    },
  };
}
