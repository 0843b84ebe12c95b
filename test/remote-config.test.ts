/**
 * Redis configuration of `serve --redis` and `worker`, with real processes
 * and a real redis-server that requires a password: the password never
 * reaches argv (file, environment), a log line or an MCP client (defect 2);
 * bad URLs, refused credentials and an unreachable Redis are each told
 * apart, in one line, at start (defect 10).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../bench/lib/free-port.js';
import { CLI, RawServer, sleep, until } from './helpers.js';
import { startRedis, type RedisProcess } from './redis-helpers.js';
import { call, initializeRaw } from './remote-helpers.js';

const PW = 'Secr3t-pass-xyz';
const Q = 'config';
let redis: RedisProcess;
let dir: string;
const killers: (() => void)[] = [];

beforeAll(async () => {
  redis = await startRedis({ password: PW });
  dir = mkdtempSync(join(tmpdir(), 'mcp-redis-config-'));
}, 30_000);
afterAll(async () => {
  for (const k of killers) k();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the CLI to its exit (or `ms`), with its stderr. */
function run(
  args: string[],
  env: Record<string, string> = {},
  ms = 30_000,
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      child.kill('SIGKILL');
      resolve({ code: -1, stderr });
    }, ms);
    child.once('exit', (code) => {
      clearTimeout(t);
      resolve({ code, stderr });
    });
  });
}

/** Starts a worker host with `env`, resolved once it serves. */
async function worker(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ pid: number; stderr: () => string; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, [CLI, 'worker', '--queue', Q, '--threads', '1', ...args], {
    stdio: 'pipe',
    env: { ...process.env, ...env },
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  killers.push(() => child.kill('SIGKILL'));
  await until(() => /serving queue/.test(stderr) || child.exitCode !== null, 30_000, 'the worker serving');
  return {
    pid: child.pid!,
    stderr: () => stderr,
    stop: () => new Promise((resolve) => (child.once('exit', (code) => resolve(code)), child.kill('SIGTERM'))),
  };
}

const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8');
function text(m: Record<string, unknown>): string {
  const result = m.result as { content?: { text: string }[] } | undefined;
  return result?.content?.[0]?.text ?? JSON.stringify(m.error ?? m);
}

describe('defect 2: the Redis password stays secret', () => {
  it('URL from a file (serve) and from the environment (worker): not in argv, not in any log line, not in a tool error', async () => {
    const file = join(dir, 'redis-url');
    writeFileSync(file, `${redis.url}\n`, { mode: 0o600 });
    const host = await worker([], { MCP_CANCEL_POOL_REDIS_URL: redis.url });
    const front = new RawServer(['--redis-url-file', file, '--queue', Q]);
    killers.push(() => front.kill());
    await initializeRaw(front);
    call(front, 'ok', 'spin', { ms: 1 });
    expect(text(await front.next((m) => m.id === 'ok', 20_000))).toMatch(/^spun 1 slices/);
    for (const pid of [host.pid, front.child.pid!]) expect(cmdline(pid)).not.toContain(PW);
    expect(front.stderr).toMatch(/calls queued on Redis redis:\/\/:\*\*\*@127\.0\.0\.1:\d+ \(queue 'config'\)/);
    expect(host.stderr()).toMatch(/on Redis redis:\/\/:\*\*\*@127\.0\.0\.1:\d+ with 1 thread /);
    await redis.kill();
    await sleep(500);
    call(front, 'down', 'spin', { ms: 1 });
    const down = text(await front.next((m) => m.id === 'down', 10_000));
    expect(down).toMatch(/^Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+ is unreachable/);
    await sleep(1500);
    for (const out of [down, front.stderr, host.stderr(), JSON.stringify(front.lines)]) expect(out).not.toContain(PW);
    await redis.restart();
    expect(await host.stop()).toBe(0);
    expect(host.stderr()).not.toContain(PW);
    front.kill();
  }, 90_000);

  it('a URL in argv (--redis) is still redacted in the start-up line', async () => {
    const front = new RawServer(['--redis', redis.url, '--queue', Q]);
    killers.push(() => front.kill());
    await initializeRaw(front);
    await until(() => /serving on stdio/.test(front.stderr), 10_000, 'the start-up line');
    expect(front.stderr).toMatch(/redis:\/\/:\*\*\*@127\.0\.0\.1/);
    expect(front.stderr).not.toContain(PW);
    front.kill();
  }, 60_000);
});

describe('defect 10: bad configuration is told at start, in one line', () => {
  for (const [what, args] of [
    ['serve --redis notaurl', ['serve', '--redis', 'notaurl']],
    ["serve --redis 'not a url'", ['serve', '--redis', 'not a url']],
    ['worker --redis notaurl', ['worker', '--redis', 'notaurl']],
    ['serve --redis http://127.0.0.1:6379', ['serve', '--redis', 'http://127.0.0.1:6379']],
  ] as const) {
    it(`${what}: exits 1 with one line naming the URL problem, no stack`, async () => {
      const { code, stderr } = await run([...args]);
      expect(code).toBe(1);
      const lines = stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/not a Redis URL/);
      expect(stderr).not.toMatch(/\n\s+at /);
    }, 40_000);
  }

  for (const command of ['serve', 'worker'] as const) {
    it(`${command} with a wrong password: exits 1 saying the credentials were refused (not "unreachable"), without the password`, async () => {
      const wrong = redis.url.replace(encodeURIComponent(PW), 'Wr0ng-guess-abc');
      const { code, stderr } = await run([command, '--redis', wrong, '--queue', Q]);
      expect(code).toBe(1);
      expect(stderr).toMatch(/refused the credentials/);
      expect(stderr).not.toMatch(/unreachable/);
      expect(stderr).not.toContain('Wr0ng-guess-abc');
      expect(stderr).not.toMatch(/\n\s+at /);
    }, 40_000);
  }

  it('worker with Redis down: says so once (not twice a second), keeps waiting, and exits on SIGTERM', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [CLI, 'worker', '--redis', `redis://127.0.0.1:${port}`, '--threads', '1'], {
      stdio: 'pipe',
    });
    killers.push(() => child.kill('SIGKILL'));
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    await until(() => /unreachable/.test(stderr), 20_000, 'the unreachable line');
    await sleep(4000);
    expect(stderr.split('\n').filter((l) => /unreachable/.test(l))).toHaveLength(1);
    expect(child.exitCode).toBeNull();
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 60_000);

  it('serve with Redis down: says so, serves after its start wait, and answers calls with a clear error', async () => {
    const port = await freePort();
    const front = new RawServer(['--redis', `redis://127.0.0.1:${port}`]);
    killers.push(() => front.kill());
    await until(() => /unreachable/.test(front.stderr), 20_000, 'the unreachable line');
    await initializeRaw(front, 40_000);
    expect(front.stderr).toMatch(/serving anyway/);
    call(front, 'x', 'spin', { ms: 1 });
    expect(text(await front.next((m) => m.id === 'x', 10_000))).toMatch(
      /^Redis at redis:\/\/127\.0\.0\.1:\d+ is unreachable/,
    );
    expect(front.child.exitCode).toBeNull();
    front.kill();
  }, 60_000);
});

describe('rediss:// and --redis-ca-file', () => {
  it('a TLS Redis: refused with a certificate error without the CA file (not "unreachable" alone), served with it', async () => {
    const tls = join(dir, 'tls');
    spawnSync('mkdir', ['-p', tls]);
    const ssl = (...args: string[]) => {
      const r = spawnSync('openssl', args, { cwd: tls, stdio: 'pipe' });
      if (r.error || r.status !== 0)
        throw new Error(`openssl ${args[0]} failed (is openssl installed?): ${r.stderr?.toString() ?? r.error}`);
    };
    ssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '2',
      '-subj',
      '/CN=test-ca',
    );
    ssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'server.key',
      '-out',
      'server.csr',
      '-subj',
      '/CN=localhost',
    );
    writeFileSync(join(tls, 'ext.cnf'), 'subjectAltName=DNS:localhost\n');
    ssl(
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'server.pem',
      '-days',
      '2',
      '-extfile',
      'ext.cnf',
    );
    const port = await freePort();
    const server = spawn(
      'redis-server',
      [
        '--port',
        '0',
        '--tls-port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--tls-cert-file',
        join(tls, 'server.pem'),
        '--tls-key-file',
        join(tls, 'server.key'),
        '--tls-ca-cert-file',
        join(tls, 'ca.pem'),
        '--tls-auth-clients',
        'no',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        tls,
      ],
      { stdio: 'ignore' },
    );
    killers.push(() => server.kill('SIGKILL'));
    const url = `rediss://localhost:${port}`;
    const noCa = spawn(process.execPath, [CLI, 'worker', '--redis', url, '--threads', '1'], { stdio: 'pipe' });
    killers.push(() => noCa.kill('SIGKILL'));
    let stderr = '';
    noCa.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    await until(() => /certificate was not accepted/.test(stderr), 20_000, 'the certificate error');
    expect(stderr).not.toMatch(/serving queue/);
    noCa.kill('SIGKILL');
    const host = await worker(['--redis', url, '--redis-ca-file', join(tls, 'ca.pem')]);
    expect(host.stderr()).toMatch(/serving queue 'config' on Redis rediss:\/\/localhost:\d+/);
    const front = new RawServer(['--redis', url, '--redis-ca-file', join(tls, 'ca.pem'), '--queue', Q]);
    killers.push(() => front.kill());
    await initializeRaw(front);
    call(front, 'tls', 'spin', { ms: 1 });
    expect(text(await front.next((m) => m.id === 'tls', 20_000))).toMatch(/^spun 1 slices/);
    front.kill();
    expect(await host.stop()).toBe(0);
    expect(
      (await run(['serve', '--redis', 'redis://localhost:1', '--redis-ca-file', join(tls, 'ca.pem')])).stderr,
    ).toMatch(/--redis-ca-file needs a rediss:\/\/ URL/);
  }, 90_000);
});
