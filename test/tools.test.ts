/**
 * The built-in CPU-heavy tools, driven through the real compiled Executor
 * (run `npx tsc -p .` first). The cancellation cases start a job big enough to
 * run for seconds and expect a cooperative stop well inside the grace period,
 * which only happens if the tool checks for cancellation inside its loops.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Executor, type JobOutcome } from '../dist/src/index.js';

type Completed = Extract<JobOutcome, { kind: 'completed' }>;
type Content = Completed['result']['content'][number];

let root: string;
let executor: Executor;
let nextId = 0;
const SESSION = 'tools-test';

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'tools-test-'));
  executor = await Executor.create({ threads: 2, toolSettings: { root } });
});

afterAll(async () => {
  await executor?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

function run(tool: string, args: unknown): Promise<JobOutcome> {
  return executor.submit(SESSION, ++nextId, { tool, args }).outcome;
}

async function completed(tool: string, args: unknown): Promise<Completed['result']> {
  const outcome = await run(tool, args);
  if (outcome.kind !== 'completed') throw new Error(`expected ${tool} to complete, got ${JSON.stringify(outcome)}`);
  return outcome.result;
}

function text(content: Content[]): string {
  return content.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('\n');
}

/** Starts a job, cancels it once it is well under way, and times the stop. */
async function cancelMidRun(tool: string, args: unknown): Promise<{ outcome: JobOutcome; stopMs: number }> {
  const id = ++nextId;
  let firstProgress!: () => void;
  const progressed = new Promise<void>((resolve) => (firstProgress = resolve));
  const job = executor.submit(SESSION, id, { tool, args, onProgress: () => firstProgress() });
  // Progress means the main loop is under way; then let it run a little longer.
  const first = await Promise.race([progressed.then(() => 'progress'), job.outcome.then(() => 'ended')]);
  if (first === 'ended') expect.fail(`${tool} ended before reporting progress`);
  await new Promise((r) => setTimeout(r, 100));
  // Still running: the job really is big, so a fast stop means the checkpoints fired.
  expect(job.state).toBe('running');
  const cancelledAt = performance.now();
  expect(executor.tryCancel(SESSION, id)).toBe('cancelled-running');
  const outcome = await job.outcome;
  return { outcome, stopMs: performance.now() - cancelledAt };
}

describe('hash_file', () => {
  it('matches node:crypto for every algorithm', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 12345); // not a multiple of the chunk size
    writeFileSync(join(root, 'data.bin'), data);
    for (const algorithm of ['sha256', 'sha512', 'sha1', 'md5'] as const) {
      const result = await completed('hash_file', { path: 'data.bin', algorithm });
      const digest = createHash(algorithm).update(data).digest('hex');
      expect(result.structuredContent).toEqual({ algorithm, digest, bytes: data.length, path: 'data.bin' });
      expect(text(result.content)).toBe(`${algorithm} ${digest}  data.bin (${data.length} bytes)`);
    }
  });

  it('defaults to sha256 and accepts nested and absolute paths inside the root', async () => {
    mkdirSync(join(root, 'sub'), { recursive: true });
    writeFileSync(join(root, 'sub', 'a.txt'), 'abc');
    const sha = createHash('sha256').update('abc').digest('hex');
    for (const path of ['sub/a.txt', join(root, 'sub', 'a.txt'), './sub/../sub/a.txt']) {
      const result = await completed('hash_file', { path });
      expect(result.structuredContent).toMatchObject({ algorithm: 'sha256', digest: sha, path: 'sub/a.txt' });
    }
  });

  it('rejects paths outside the root, including through a symlink', async () => {
    symlinkSync('/etc/passwd', join(root, 'escape'));
    symlinkSync('/etc', join(root, 'etc-dir'));
    for (const path of ['../etc/passwd', '/etc/passwd', 'escape', 'etc-dir/passwd', 'sub/../../x']) {
      const outcome = await run('hash_file', { path });
      expect(outcome.kind, path).toBe('failed');
      if (outcome.kind !== 'failed') continue;
      expect(outcome.stage).toBe('resolve');
      expect(outcome.message).toContain(`path '${path}' is outside the allowed root`);
    }
  });

  it('reports missing files and directories clearly', async () => {
    const missing = await run('hash_file', { path: 'nope.bin' });
    expect(missing).toMatchObject({ kind: 'failed', message: expect.stringContaining('does not exist') });
    const dir = await run('hash_file', { path: '.' });
    expect(dir).toMatchObject({ kind: 'failed', message: expect.stringContaining('not a regular file') });
  });
});

describe('compress', () => {
  const decompress = { gzip: gunzipSync, deflate: inflateSync, brotli: brotliDecompressSync } as const;
  const ext = { gzip: 'gz', deflate: 'zz', brotli: 'br' } as const;

  function blobOf(result: Completed['result']): { uri: string; mimeType: string | undefined; data: Buffer } {
    const res = result.content.find((c) => c.type === 'resource');
    if (!res || res.type !== 'resource' || !('blob' in res.resource)) throw new Error('no blob resource in the result');
    return { uri: res.resource.uri, mimeType: res.resource.mimeType, data: Buffer.from(res.resource.blob, 'base64') };
  }

  it.each(['gzip', 'deflate', 'brotli'] as const)(
    'round-trips a multi-chunk file and a text with %s',
    async (format) => {
      // Compressible but not trivial, and longer than several chunks.
      const lines = Array.from({ length: 40_000 }, (_, i) => `line ${i}: ${(i * 2654435761) % 1000003}\n`).join('');
      writeFileSync(join(root, 'lines.txt'), lines);
      const fromFile = await completed('compress', { path: 'lines.txt', format, level: 5 });
      const blob = blobOf(fromFile);
      expect(blob.uri).toBe(`compressed://lines.txt.${ext[format]}`);
      expect(decompress[format](blob.data).toString('utf8')).toBe(lines);
      expect(fromFile.structuredContent).toMatchObject({
        format,
        level: 5,
        inputBytes: Buffer.byteLength(lines),
        outputBytes: blob.data.length,
      });
      expect(blob.data.length).toBeLessThan(Buffer.byteLength(lines) / 2);
      expect(text(fromFile.content)).toContain(
        `${format}: ${Buffer.byteLength(lines)} bytes in, ${blob.data.length} bytes out`,
      );

      const message = 'héllo wörld — '.repeat(100);
      const fromText = blobOf(await completed('compress', { text: message, format }));
      expect(fromText.uri).toBe(`compressed://text.${ext[format]}`);
      expect(decompress[format](fromText.data).toString('utf8')).toBe(message);
    },
  );

  it('validates its arguments and the root', async () => {
    expect(await run('compress', { text: 'a', path: 'lines.txt' })).toMatchObject({
      kind: 'failed',
      code: 'invalid_arguments',
    });
    expect(await run('compress', {})).toMatchObject({ kind: 'failed', code: 'invalid_arguments' });
    expect(await run('compress', { text: 'a', format: 'gzip', level: 11 })).toMatchObject({
      kind: 'failed',
      code: 'invalid_arguments',
    });
    expect(await run('compress', { path: '../etc/passwd' })).toMatchObject({
      kind: 'failed',
      message: expect.stringContaining('outside the allowed root'),
    });
  });
});

describe('render_mandelbrot', () => {
  it('returns a PNG of the requested size', async () => {
    const result = await completed('render_mandelbrot', { width: 96, height: 64, maxIterations: 200 });
    const image = result.content.find((c) => c.type === 'image');
    if (!image || image.type !== 'image') throw new Error('no image in the result');
    expect(image.mimeType).toBe('image/png');
    const bytes = Buffer.from(image.data, 'base64');
    expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const png = PNG.sync.read(bytes);
    expect([png.width, png.height]).toEqual([96, 64]);
    // The centre (-0.5, 0) lies in the set (black); the corners are far outside it (coloured).
    const at = (x: number, y: number) => [...png.data.subarray((y * 96 + x) * 4, (y * 96 + x) * 4 + 3)];
    expect(at(48, 32)).toEqual([0, 0, 0]);
    expect(at(0, 0)).not.toEqual([0, 0, 0]);
    expect(text(result.content)).toContain('96×64');
  });

  it('rejects sizes out of range', async () => {
    expect(await run('render_mandelbrot', { width: 4096 })).toMatchObject({
      kind: 'failed',
      code: 'invalid_arguments',
    });
  });
});

describe('count_primes', () => {
  it.each([
    [2, 1, 2, 0],
    [3, 2, 3, 0],
    [100, 25, 97, 8],
    [10_000_000, 664_579, 9_999_991, 58_980],
    // Spans three segments (values checked against a plain sieve), so twins across boundaries count.
    [3_000_000, 216_816, 2_999_999, 20_932],
  ])('limit %i: %i primes, largest %i, %i twin pairs', async (limit, count, largest, twinPairs) => {
    const result = await completed('count_primes', { limit });
    expect(result.structuredContent).toEqual({ limit, count, largest, twinPairs });
    expect(text(result.content)).toContain(`${count} primes`);
  });

  it('defaults to 10^7', async () => {
    const result = await completed('count_primes', {});
    expect(result.structuredContent).toMatchObject({ limit: 10_000_000, count: 664_579 });
  });
});

describe('cancellation mid-run stops cooperatively', () => {
  const cases: [string, () => unknown][] = [
    [
      'hash_file',
      () => {
        // Sparse: 8 GiB of zeros costs no disk, and md5 over it takes many seconds.
        writeFileSync(join(root, 'big.sparse'), '');
        truncateSync(join(root, 'big.sparse'), 8 * 1024 ** 3);
        return { path: 'big.sparse', algorithm: 'md5' };
      },
    ],
    [
      'compress',
      () => {
        writeFileSync(
          join(root, 'big.txt'),
          Array.from({ length: 1_000_000 }, (_, i) => `${i} ${(i * 2654435761) % 1000003}\n`).join(''),
        );
        return { path: 'big.txt', format: 'brotli', level: 11 };
      },
    ],
    ['render_mandelbrot', () => ({ width: 2048, height: 2048, maxIterations: 20_000 })],
    ['count_primes', () => ({ limit: 5e9 })],
  ];

  it.each(cases)('%s', async (tool, makeArgs) => {
    const { outcome, stopMs } = await cancelMidRun(tool, makeArgs());
    expect(outcome).toEqual({ kind: 'cancelled', from: 'running', hardKilled: false });
    expect(stopMs).toBeLessThan(2000);
    // The worker is still usable afterwards.
    expect((await completed('count_primes', { limit: 100 })).structuredContent).toMatchObject({ count: 25 });
  });
});
