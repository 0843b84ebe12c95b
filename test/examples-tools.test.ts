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
import { until } from './helpers.js';
import type { Executor } from '../dist/src/index.js';

closeExecutorsAfterEach();
const TOOLS = new URL('../dist-dev/examples/tools/index.js', import.meta.url);
const BIG = 'big.bin';

/**
 * The grace before a hard stop: a cooperative tool checks far more often than this even on a busy machine (the
 * compiler asks its token per file), so only the tool that never checks is hard-stopped, as the tests assert.
 */
const GRACE_MS = 3000;

async function pool(root: string): Promise<Executor> {
  return make({ toolModules: [TOOLS], builtins: false, threads: 1, graceMs: GRACE_MS, toolSettings: { root } });
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

/**
 * The processes a call of this process's pool started, and everything they started: each carries the mark the child
 * guard puts in the environment of the children it starts, `MCP_CANCEL_POOL_CHILD_CELL=<our pid>.<cell>`, which its
 * own children inherit.
 */
function poolProcesses(): string[] {
  const mark = `MCP_CANCEL_POOL_CHILD_CELL=${process.pid}.`;
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (
        !readFileSync(`/proc/${entry}/environ`, 'latin1')
          .split('\0')
          .some((v) => v.startsWith(mark))
      )
        continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // A zombie is dead: its parent has yet to collect it.
      if (stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z')
        found.push(stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')));
    } catch {
      /* gone while we looked */
    }
  }
  return found;
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

  it('sha256_chunked and gzip_file: a chunked hash stops between chunks; the dd | gzip | wc pipeline dies with the call', async () => {
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
    // gzip -9 of "hello\n" is 26 bytes; wc counts them.
    expect(await completed(ex, 'gzip_file', { path: 'small.txt' })).toEqual({
      path: 'small.txt',
      bytes: 6,
      compressed: 26,
    });
    const id = `c${freshId()}`;
    const { job } = await submitRunning(ex, 'ex', id, 'gzip_file', { path: BIG });
    await until(() => poolProcesses().includes('gzip'), 30_000, 'the pipeline running');
    expect(ex.tryCancel('ex', id)).toBe('cancelled-running');
    expect(await within(job.outcome, 30_000, 'gzip_file stopping')).toEqual({
      kind: 'cancelled',
      from: 'running',
      hardKilled: false,
    });
    // The group got the stop: the shell and dd, gzip and wc, which the shell started, all end.
    await until(() => poolProcesses().length === 0, 30_000, 'every process of the pipeline gone');
    expect(ex.stats().childrenKilled).toBeGreaterThanOrEqual(1);
  }, 120_000);
});
