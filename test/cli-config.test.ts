/**
 * Configuration and start-up errors of the real command line: every flag
 * reads MCP_CANCEL_POOL_<FLAG>, shown in --help, the command line wins; a
 * flag for another mode is refused in one line; each start-up error is one
 * line, exit 1, no stack.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, stats, stdioClient, until, type WiredClient } from './helpers.js';
import { lines, run, type Ran } from './cli-helpers.js';
import { spawnHttp } from './http-helpers.js';

const cli = (args: string[], env: Record<string, string> = {}) =>
  run(process.execPath, [CLI, ...args], { env, ms: 60_000 });

/** One line on stderr, naming `what`, exit 1, nothing on stdout, no stack frame. */
function oneLineFailure(r: Ran, what: RegExp): void {
  expect(r.code).toBe(1);
  expect(r.stdout).toBe('');
  expect(lines(r.stderr)).toHaveLength(1);
  expect(r.stderr).toMatch(what);
  expect(r.stderr).not.toMatch(/^\s+at /m);
}

function stderrOf(w: WiredClient): () => string {
  let text = '';
  w.transport.stderr!.on('data', (d: Buffer) => (text += d.toString()));
  return () => text;
}

const clients: WiredClient[] = [];
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
});

describe('flags from MCP_CANCEL_POOL_* variables', () => {
  it('--help names the variable of every flag', async () => {
    for (const command of ['serve', 'worker']) {
      const raw = (await cli([command, '--help'])).stdout;
      const flags = [...raw.matchAll(/^ {2}(?:-\w, )?(--[a-z-]+)/gm)].map((m) => m[1]!).filter((f) => f !== '--help');
      expect(flags.length).toBeGreaterThan(command === 'serve' ? 30 : 10);
      const help = raw.replace(/\s+/g, ' ');
      for (const flag of flags)
        expect(help, `${command} ${flag}`).toContain(
          `MCP_CANCEL_POOL_${flag.slice(2).replace(/-/g, '_').toUpperCase()}`,
        );
    }
    expect((await cli(['serve', '--help'])).stdout.replace(/\s+/g, ' ')).toContain(
      'env: MCP_CANCEL_POOL_SPARE_THREADS',
    );
  });

  it('a variable sets the flag, and the command line wins over it', async () => {
    const fromEnv = await stdioClient([], {}, { MCP_CANCEL_POOL_THREADS: '1', MCP_CANCEL_POOL_SPARE_THREADS: '0' });
    clients.push(fromEnv);
    expect(await stats(fromEnv.client)).toMatchObject({ threads: 1 });
    const err = stderrOf(fromEnv);
    await until(() => err().includes('with 1 worker thread (+0 standby)'), 20_000, 'the start-up line');

    const overridden = await stdioClient(
      ['--threads', '2'],
      {},
      { MCP_CANCEL_POOL_THREADS: '1', MCP_CANCEL_POOL_SPARE_THREADS: '0' },
    );
    clients.push(overridden);
    expect(await stats(overridden.client)).toMatchObject({ threads: 2 });
  }, 90_000);

  it('a switch takes 1 or 0 from its variable, and refuses anything else', async () => {
    const off = await stdioClient(['--threads', '1'], {}, { MCP_CANCEL_POOL_NO_BUILTINS: '0' });
    clients.push(off);
    expect((await off.client.listTools()).tools.map((t) => t.name)).toContain('spin');
    const on = await stdioClient(['--threads', '1'], {}, { MCP_CANCEL_POOL_NO_BUILTINS: '1' });
    clients.push(on);
    expect((await on.client.listTools()).tools.map((t) => t.name)).not.toContain('spin');
    oneLineFailure(
      await cli(['serve'], { MCP_CANCEL_POOL_ALLOW_UNAUTHENTICATED: 'maybe' }),
      /MCP_CANCEL_POOL_ALLOW_UNAUTHENTICATED=maybe: expected 1 or 0/,
    );
    oneLineFailure(
      await cli(['serve'], { MCP_CANCEL_POOL_THREADS: 'many' }),
      /'--threads <n>' value 'many' from env 'MCP_CANCEL_POOL_THREADS' is invalid/,
    );
  }, 90_000);
});

describe('flags that do not apply to the mode are refused', () => {
  const cases: [string[], RegExp][] = [
    [['serve', '--port', '3000'], /^\[mcp-cancel-pool\] --port applies to --transport http only$/m],
    [['serve', '--auth-token-file', '/nonexistent'], /--auth-token-file applies to --transport http only/],
    [
      ['serve', '--redis', 'redis://127.0.0.1:1', '--threads', '2'],
      /--threads sets the local pool; with --redis the worker hosts run the calls/,
    ],
    [['serve', '--queue', 'q'], /--queue applies with a Redis URL only/],
    [['serve', '--redis-ca-file', '/tmp/ca.pem'], /--redis-ca-file applies with a Redis URL only/],
    [
      ['serve', '--transport', 'http', '--max-output-buffer-bytes', '100000'],
      /--max-output-buffer-bytes applies to stdio only/,
    ],
    [['serve', '--transport', 'http', '--health-port', '9464'], /--health-port applies to stdio only/],
    [['serve', '--transport', 'http', '--health-auth'], /--health-auth needs a token/],
    [['serve', '--transport', 'http', '--on-stdin-close', 'finish'], /--on-stdin-close applies to stdio only/],
    [['serve', '--drain-timeout-ms', '1000'], /--drain-timeout-ms applies with --on-stdin-close finish only/],
    [['serve', '--on-stdin-close', 'later'], /--on-stdin-close.*Allowed choices are cancel, finish/],
    [
      ['worker', '--redis', 'redis://127.0.0.1:1', '--health-host', '0.0.0.0'],
      /--health-host applies with --health-port only/,
    ],
  ];
  for (const [args, message] of cases) {
    it(args.join(' '), async () => oneLineFailure(await cli(args), message));
  }

  it('a variable for another mode is left alone (one environment often serves several modes)', async () => {
    const w = await stdioClient(['--threads', '1', '--spare-threads', '0'], {}, { MCP_CANCEL_POOL_PORT: '3000' });
    clients.push(w);
    expect(await stats(w.client)).toMatchObject({ threads: 1 });
  }, 60_000);
});

describe('start-up errors: one line, exit 1, never a stack', () => {
  let blocker: Server | undefined;
  afterAll(() => blocker?.close());

  it('a port in use names EADDRINUSE and the fix', async () => {
    blocker = createServer();
    await new Promise<void>((r) => blocker!.listen(0, '127.0.0.1', r));
    const { port } = blocker.address() as { port: number };
    oneLineFailure(
      await cli(['serve', '--transport', 'http', '--threads', '1', '--port', String(port)]),
      new RegExp(
        `cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use \\(EADDRINUSE\\); stop what uses it, or pick another port`,
      ),
    );
  }, 60_000);

  it('--port 70000 is refused by range', async () => {
    oneLineFailure(
      await cli(['serve', '--transport', 'http', '--port', '70000']),
      /'--port <port>' argument '70000' is invalid. expected an integer from 0 to 65535/,
    );
  });

  it("--host '[::1]' (the bracketed form of URLs) binds ::1", async () => {
    const s = await spawnHttp(['--threads', '1', '--host', '[::1]']);
    expect(s.kind).toBe('listening');
    if (s.kind !== 'listening') return;
    expect(s.stderr()).toContain('listening on http://[::1]:');
    await s.stop();
  }, 60_000);

  it('a host that does not resolve says so', async () => {
    oneLineFailure(
      await cli([
        'serve',
        '--transport',
        'http',
        '--threads',
        '1',
        '--host',
        'no-such-host.invalid',
        '--allow-unauthenticated',
      ]),
      /cannot listen on host no-such-host\.invalid: it does not resolve \(ENOTFOUND|EAI_AGAIN\)/,
    );
  }, 60_000);

  it('a tools module with a syntax error names file:line:col', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bad-tools-'));
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    writeFileSync(join(dir, 'tools.js'), 'export const a = 1;\nconst b = );\n');
    oneLineFailure(
      await cli(['serve', '--tools', join(dir, 'tools.js')]),
      new RegExp(`--tools ${join(dir, 'tools.js').replace(/[.]/g, '\\.')}:2:11: Unexpected token '\\)'`),
    );
    writeFileSync(join(dir, 'open.js'), 'export default [\n  { name: "x",\n');
    oneLineFailure(await cli(['serve', '--tools', join(dir, 'open.js')]), /open\.js:3:1: Unexpected end of input/);
  }, 60_000);
});
