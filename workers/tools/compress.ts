/**
 * `compress`: gzip, deflate (zlib) or brotli of a text or a file under the
 * root, as one compressed stream fed chunk by chunk with a cancellation check
 * between chunks.
 */
import { basename } from 'node:path';
import { pipeline } from 'node:stream/promises';
import {
  constants,
  createBrotliCompress,
  createDeflate,
  createGzip,
  type BrotliOptions,
  type ZlibOptions,
} from 'node:zlib';
import { z } from 'zod';
import { defineTool, stage } from '../../src/stages/tool.js';
import { readChunks, resolveInRoot } from './files.js';

const CHUNK = 256 * 1024;
/** The result travels back as base64 in one message; past this it is the wrong tool. */
const MAX_OUTPUT = 32 * 1024 * 1024;

const FORMATS = {
  gzip: { ext: 'gz', mimeType: 'application/gzip', maxLevel: 9 },
  deflate: { ext: 'zz', mimeType: 'application/zlib', maxLevel: 9 },
  brotli: { ext: 'br', mimeType: 'application/x-brotli', maxLevel: 11 },
} as const;

const input = z
  .object({
    text: z.string().optional().describe('Text to compress (UTF-8). Give exactly one of `text` and `path`.'),
    path: z
      .string()
      .min(1)
      .optional()
      .describe(
        "File to compress, relative to the server's allowed root directory. Give exactly one of `text` and `path`.",
      ),
    format: z
      .enum(['gzip', 'brotli', 'deflate'])
      .default('gzip')
      .describe('Output format: gzip (.gz), brotli (.br) or deflate in a zlib wrapper (.zz). Default gzip.'),
    level: z
      .number()
      .int()
      .min(0)
      .max(11)
      .optional()
      .describe(
        'Compression level: 0–9 for gzip/deflate (default 6), 0–11 for brotli (default 11, slow on large inputs).',
      ),
  })
  .refine((a) => (a.text === undefined) !== (a.path === undefined), {
    message: 'give exactly one of `text` and `path`',
    path: ['text'],
  })
  .refine((a) => a.level === undefined || a.level <= FORMATS[a.format].maxLevel, {
    message: 'level is out of range for this format (gzip/deflate: 0–9, brotli: 0–11)',
    path: ['level'],
  });
type Input = z.infer<typeof input>;

interface Source {
  args: Input;
  name: string;
  size: number;
  chunks: () => Iterable<Buffer>;
}

interface Compressed {
  args: Input;
  name: string;
  inputBytes: number;
  output: Buffer;
}

function* slices(data: Buffer): Generator<Buffer> {
  for (let i = 0; i < data.length; i += CHUNK) yield data.subarray(i, i + CHUNK);
}

function compressor(args: Input, size: number, isText: boolean) {
  if (args.format === 'brotli') {
    const params: NonNullable<BrotliOptions['params']> = { [constants.BROTLI_PARAM_SIZE_HINT]: size };
    if (args.level !== undefined) params[constants.BROTLI_PARAM_QUALITY] = args.level;
    if (isText) params[constants.BROTLI_PARAM_MODE] = constants.BROTLI_MODE_TEXT;
    return createBrotliCompress({ params });
  }
  const options: ZlibOptions = args.level === undefined ? {} : { level: args.level };
  return args.format === 'gzip' ? createGzip(options) : createDeflate(options);
}

export const compress = defineTool({
  name: 'compress',
  title: 'Compress text or a file',
  description:
    "Compresses a text or a file under the server's allowed root with gzip, deflate or brotli and returns size statistics plus the compressed bytes as an embedded resource (base64). Output is limited to 32 MiB. Brotli at high levels is slow (about 1 MB/s at level 11).",
  input,
  output: z.strictObject({
    format: z.enum(['gzip', 'brotli', 'deflate']).describe('Output format.'),
    level: z.number().int().nullable().describe("Compression level asked for, or null for the format's default."),
    inputBytes: z.number().int().min(0).describe('Bytes in.'),
    outputBytes: z.number().int().min(0).describe('Bytes out.'),
    ratio: z.number().nullable().describe('outputBytes / inputBytes; null for an empty input.'),
    uri: z.string().describe('The URI of the embedded compressed resource.'),
  }),
  stages: [
    stage('resolve', (args: Input, ctx): Source => {
      if (args.path !== undefined) {
        const file = resolveInRoot(args.path, ctx.settings);
        return { args, name: basename(file.relative), size: file.size, chunks: () => readChunks(file.absolute, CHUNK) };
      }
      const data = Buffer.from(args.text ?? '', 'utf8');
      return { args, name: 'text', size: data.length, chunks: () => slices(data) };
    }),
    stage('compress', async (src: Source, ctx): Promise<Compressed> => {
      let inputBytes = 0;
      let outputBytes = 0;
      const out: Buffer[] = [];
      async function* feed() {
        for (const chunk of src.chunks()) {
          ctx.checkpoint();
          inputBytes += chunk.length;
          ctx.progress(inputBytes, Math.max(inputBytes, src.size), `read ${inputBytes} of ${src.size} bytes`);
          yield chunk;
        }
      }
      async function collect(compressed: AsyncIterable<Buffer>) {
        for await (const piece of compressed) {
          outputBytes += piece.length;
          if (outputBytes > MAX_OUTPUT) throw new Error(`compressed output exceeds ${MAX_OUTPUT / 1024 / 1024} MiB`);
          out.push(piece);
        }
      }
      // The signal also interrupts a chunk still inside zlib (brotli can spend a long time on one).
      await pipeline(feed, compressor(src.args, src.size, src.args.text !== undefined), collect, {
        signal: ctx.signal,
      });
      return { args: src.args, name: src.name, inputBytes, output: Buffer.concat(out, outputBytes) };
    }),
    stage('report', (c: Compressed) => {
      const { ext, mimeType } = FORMATS[c.args.format];
      const uri = `compressed://${encodeURIComponent(`${c.name}.${ext}`)}`;
      const ratio = c.inputBytes === 0 ? null : c.output.length / c.inputBytes;
      const ratioText =
        ratio === null ? 'n/a' : `${ratio.toFixed(3)} (output is ${(ratio * 100).toFixed(1)}% of input)`;
      const stats = {
        format: c.args.format,
        level: c.args.level ?? null,
        inputBytes: c.inputBytes,
        outputBytes: c.output.length,
        ratio,
        uri,
      };
      return {
        content: [
          {
            type: 'text' as const,
            text: `${c.args.format}: ${c.inputBytes} bytes in, ${c.output.length} bytes out, ratio ${ratioText}`,
          },
          { type: 'resource' as const, resource: { uri, mimeType, blob: c.output.toString('base64') } },
        ],
        structuredContent: stats,
      };
    }),
  ],
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  execution: { taskSupport: 'optional' }, // long CPU work: a client may run it as a task
});
