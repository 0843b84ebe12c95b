/**
 * The example tools of examples/tools/ on the real pool: each kind of work
 * stops on a cancel. A WebAssembly loop that imports ctx.wasmCheckpoint
 * returns early (no hard stop); one that never asks is ended by the hard
 * stop; the TypeScript compiler stops through its CancellationToken; a
 * chunked hash stops between chunks; a gzip child process dies with the call.
 * Each asserts the outcome and how it stopped, never how fast.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closeExecutorsAfterEach, freshId, make, scratch, submitRunning, within } from './executor-helpers.js';
import { ROOT } from './cli-helpers.js';
import type { Executor } from '../dist/src/index.js';

closeExecutorsAfterEach();
const TOOLS = new URL('../dist-dev/examples/tools/index.js', import.meta.url);
const BIG = 'big.bin';

async function pool(root: string): Promise<Executor> {
  return make({ toolModules: [TOOLS], builtins: false, threads: 1, graceMs: 300, toolSettings: { root } });
}

async function completed(ex: Executor, tool: string, args: Record<string, unknown>) {
  const outcome = await within(ex.submit('ex', freshId(), { tool, args }).outcome, 60_000, tool);
  if (outcome.kind !== 'completed') throw new Error(`${tool}: ${JSON.stringify(outcome)}`);
  const first = outcome.result.content[0];
  return JSON.parse(first?.type === 'text' ? first.text : 'null') as Record<string, unknown>;
}

/** Starts `tool`, waits for its first progress report (it is in the part under test), cancels, and returns the outcome. */
async function cancelInFlight(ex: Executor, tool: string, args: Record<string, unknown>) {
  const id = `c${freshId()}`;
  const { job } = await submitRunning(ex, 'ex', id, tool, args);
  expect(ex.tryCancel('ex', id)).toBe('cancelled-running');
  return within(job.outcome, 30_000, `${tool} stopping`);
}

/** Children of this process whose command is `name` (the pool runs in this process, so its tools' children are ours). */
function children(name: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (comm === name && ppid === process.pid) pids.push(Number(entry));
    } catch {
      /* gone while we looked */
    }
  }
  return pids;
}

describe('example tools', () => {
  it('wasm_primes: counts in WebAssembly; a cooperative loop returns early on cancel, a non-cooperative one is hard-stopped', async () => {
    const ex = await pool(ROOT);
    expect(await completed(ex, 'wasm_primes', { below: 100_000 })).toEqual({ below: 100_000, primes: 9592 });
    const cooperative = await cancelInFlight(ex, 'wasm_primes', { below: 2_000_000_000, checkEvery: 1000 });
    expect(cooperative).toEqual({ kind: 'cancelled', from: 'running', hardKilled: false });
    const stubborn = await cancelInFlight(ex, 'wasm_primes', { below: 2_000_000_000, checkEvery: 0 });
    expect(stubborn).toEqual({ kind: 'cancelled', from: 'running', hardKilled: true });
    expect(ex.stats().hardKilled).toBe(1);
    // The calls to ctx.wasmCheckpoint count as checks: the cooperative runs stayed within the tool's budget.
    expect(ex.stats().checkpointGaps!.wasm_primes).toMatchObject({ overBudget: 0 });
  }, 120_000);

  it('typecheck: the compiler API reports diagnostics, and its CancellationToken (reading ctx.stopped) stops it', async () => {
    const dir = join(scratch, 'ts-project');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'ok.ts'), 'export const n: number = 1;\n');
    writeFileSync(join(dir, 'bad.ts'), 'export const s: string = 1;\n');
    const ex = await pool(scratch);
    const result = await completed(ex, 'typecheck', { dir: 'ts-project' });
    expect(result).toMatchObject({ files: 2, count: 1 });
    expect(String((result.diagnostics as string[])[0])).toMatch(/not assignable to type 'string'/);
    await expect(completed(ex, 'typecheck', { dir: '..' })).rejects.toThrow(/outside the allowed root/);
    // The whole of src/ takes seconds to check: cancelled once checking began, the token stops it, no hard stop.
    const big = await pool(ROOT);
    expect(await cancelInFlight(big, 'typecheck', { dir: 'src' })).toEqual({
      kind: 'cancelled',
      from: 'running',
      hardKilled: false,
    });
  }, 120_000);

  it('sha256_chunked and gzip_file: a chunked hash stops between chunks; gzip’s process group dies with the call', async () => {
    writeFileSync(join(scratch, BIG), randomBytes(48 * 1024 * 1024));
    const ex = await pool(scratch);
    const small = join(scratch, 'small.txt');
    writeFileSync(small, 'hello\n');
    expect(await completed(ex, 'sha256_chunked', { path: 'small.txt' })).toMatchObject({
      bytes: 6,
      sha256: '5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03',
    });
    expect(await cancelInFlight(ex, 'sha256_chunked', { path: BIG })).toEqual({
      kind: 'cancelled',
      from: 'running',
      hardKilled: false,
    });
    expect(await completed(ex, 'gzip_file', { path: 'small.txt' })).toMatchObject({ bytes: 6 });
    const stopped = await cancelInFlight(ex, 'gzip_file', { path: BIG });
    expect(stopped).toEqual({ kind: 'cancelled', from: 'running', hardKilled: false });
    // The stage returned only after gzip closed: by the outcome, no gzip child of ours is left.
    expect(children('gzip')).toEqual([]);
  }, 120_000);
});
