/**
 * Node flags an operator starts the server with: the main thread keeps them,
 * and the workers still start (explicit worker execArgv rejects V8 and
 * process-wide flags, which once meant no worker could start at all).
 */
import { describe, expect, it } from 'vitest';
import { workerExecArgv } from '../dist/src/pool/worker-exec-argv.js';
import { LineServer } from './line-client.js';
import { perTestServers } from './per-test-servers.js';

const start = perTestServers((args) => new LineServer(args.slice(1), args[0]!.split(' ')));

describe('worker execArgv', () => {
  it('keeps the flags a worker accepts, drops V8 and process-wide ones, and appends its own', () => {
    const flags = [
      '--max-old-space-size=256',
      '--enable-source-maps',
      '--stack-size=900',
      '--title=x',
      '--trace-warnings',
    ];
    expect(workerExecArgv(flags, ['--no-warnings'])).toEqual([
      '--enable-source-maps',
      '--trace-warnings',
      '--no-warnings',
    ]);
    expect(workerExecArgv([], ['--no-warnings'])).toEqual(['--no-warnings']);
    // A two-word flag leaves its value behind, which no worker accepts alone: only the pool's own flags then.
    expect(workerExecArgv(['--stack-size', '900'], ['--no-warnings'])).toEqual(['--no-warnings']);
  });

  it('a server started as node --max-old-space-size=192 --stack-size=900 --enable-source-maps runs tools on its workers', async () => {
    const s = start(['--max-old-space-size=192 --stack-size=900 --enable-source-maps', '--threads', '1']);
    await s.initialize();
    s.send({ jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { name: 'spin', arguments: { ms: 1 } } });
    const answer = await s.answer('c');
    expect(answer).toHaveProperty('result');
    expect((answer.result as { isError?: boolean }).isError).toBeFalsy();
  });
});
