/**
 * A server on the local pool never loads BullMQ or ioredis: they are for `--redis` front ends (docs/many-hosts.md "Many
 * hosts"), and loaded anyway they added 5.6 MB to the main thread's live heap, which every mark-compact walks, and
 * a sixth of a second to start-up. The server subprocess runs with a resolve hook (test/fixtures/import-trace.ts)
 * that names each module it resolves.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { LineServer } from './line-client.js';
import { perTestServers } from './per-test-servers.js';

const TRACE = fileURLToPath(new URL('../dist-dev/test/fixtures/import-trace.js', import.meta.url));
const start = perTestServers((args) => new LineServer(args, ['--import', TRACE]));
const resolved = (stderr: string) => [...stderr.matchAll(/^\[import-trace\] (.+)$/gm)].map((m) => m[1]!);

describe('lazy imports', () => {
  it('a stdio server on the local pool serves calls and tasks without loading BullMQ or ioredis', async () => {
    const s = start(['--threads', '1']);
    await s.initialize();
    s.send({ jsonrpc: '2.0', id: 'call', method: 'tools/call', params: { name: 'spin', arguments: { ms: 1 } } });
    expect(await s.answer('call')).toHaveProperty('result');
    // A task-augmented call goes through the task runner, whose store serve-tasks.ts picks by backend.
    s.send({
      jsonrpc: '2.0',
      id: 'task',
      method: 'tools/call',
      params: { name: 'spin', arguments: { ms: 1 }, task: { ttl: 60_000 } },
    });
    expect(await s.answer('task')).toHaveProperty('result.task.taskId');
    const urls = resolved(s.stderr);
    // The hook saw the server's own dependencies, so an absent module is absent, not unseen.
    expect(urls.some((u) => u.includes('/node_modules/piscina/'))).toBe(true);
    expect(urls.some((u) => u.includes('/node_modules/@modelcontextprotocol/'))).toBe(true);
    expect(urls.filter((u) => /\/node_modules\/(bullmq|ioredis)\//.test(u))).toEqual([]);
  });
});

/** Every module `node` resolves importing `entry` (by the package's own name, as a user would), then running `then`. */
function modulesOf(entry: string, then = ''): string[] {
  // A CommonJS -e with dynamic imports: an ESM one's --input-type would reach the pool's workers, which refuse it.
  const script = `(async () => { await import(${JSON.stringify(entry)}); ${then} })().catch((e) => { console.error(e); process.exit(1); });`;
  const r = spawnSync(process.execPath, ['--import', TRACE, '-e', script], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(0);
  return [...new Set(resolved(r.stderr))];
}
const own = (urls: string[]) =>
  urls.flatMap((u) => (/\/dist\/(src|workers)\//.test(u) ? [u.slice(u.indexOf('/dist/') + 1)] : []));
const packagesOf = (urls: string[]) =>
  [...new Set(urls.flatMap((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1] ?? []))].sort();

describe('cold start of the entry points', () => {
  it('mcp-cancel-pool/tools loads zod and the stage code, nothing else (every worker imports the tool modules)', () => {
    const urls = modulesOf('mcp-cancel-pool/tools');
    expect(own(urls).sort()).toEqual([
      'dist/src/errors.js',
      'dist/src/stages/spawn.js',
      'dist/src/stages/tool.js',
      'dist/src/tools.js',
    ]);
    expect(packagesOf(urls)).toEqual(['zod']);
    expect(urls.filter((u) => u.startsWith('node:'))).toEqual([]);
  });

  it('the root entry (the pool) loads no transport, no HTTP code, no optional peer', () => {
    const urls = modulesOf('mcp-cancel-pool');
    expect(own(urls).filter((f) => f.includes('/transport/'))).toEqual([]);
    expect(urls.filter((u) => u === 'node:http' || u === 'node:https')).toEqual([]);
    // prom-client: the pool's Prometheus registry (an embedder's /metrics); @opentelemetry/api: the no-op tracer until
    // the application registers an SDK. Both are required dependencies; no optional peer may appear.
    expect(
      packagesOf(urls).filter(
        (p) =>
          ![
            '@modelcontextprotocol/core',
            '@modelcontextprotocol/server',
            '@opentelemetry/api',
            'eventemitter3',
            'p-queue',
            'p-timeout',
            'piscina',
            'prom-client',
            'zod',
          ].includes(p),
      ),
    ).toEqual([]);
  });

  it('mcp-cancel-pool/server loads the HTTP code on the first serveHttp, not before', () => {
    const before = modulesOf('mcp-cancel-pool/server');
    expect(own(before).filter((f) => f.includes('/transport/http/'))).toEqual([]);
    expect(before).not.toContain('node:http');
    const after = modulesOf(
      'mcp-cancel-pool/server',
      "const { serveHttp } = await import('mcp-cancel-pool/server'); const { Executor } = await import('mcp-cancel-pool'); const { newWireStats } = await import('mcp-cancel-pool/server'); const e = await Executor.create({ threads: 1 }); const s = await serveHttp(e, { port: 0, version: '0', wire: newWireStats() }); await s.close(); await e.close();",
    );
    expect(own(after)).toContain('dist/src/transport/http/serve.js');
    expect(after).toContain('node:http');
  });
});
