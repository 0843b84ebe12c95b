/**
 * `hash_file`: a file's digest, read and hashed in 1 MiB chunks with a
 * cancellation check between chunks.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { defineTool, stage } from '../../src/stages/tool.js';
import { readChunks, resolveInRoot, type RootedFile } from './files.js';

const CHUNK = 1 << 20;

const input = z.object({
  path: z
    .string()
    .min(1)
    .describe(
      "File to hash, relative to the server's allowed root directory (absolute paths must also lie inside it).",
    ),
  algorithm: z
    .enum(['sha256', 'sha512', 'sha1', 'md5'])
    .default('sha256')
    .describe('Digest algorithm (default sha256).'),
});
type Input = z.infer<typeof input>;

interface Hashed {
  algorithm: Input['algorithm'];
  digest: string;
  bytes: number;
  path: string;
}

export const hashFile = defineTool({
  name: 'hash_file',
  title: 'Hash a file',
  description:
    "Computes the sha256, sha512, sha1 or md5 digest of a file under the server's allowed root directory. Reads the whole file: cost grows with its size (roughly 0.5–2 s per GiB).",
  input,
  output: z.strictObject({
    algorithm: z.enum(['sha256', 'sha512', 'sha1', 'md5']).describe('Digest algorithm used.'),
    digest: z
      .string()
      .regex(/^[0-9a-f]+$/)
      .describe('The digest, in lower-case hex.'),
    bytes: z.number().int().min(0).describe('Bytes hashed.'),
    path: z.string().describe('The file, relative to the allowed root.'),
  }),
  stages: [
    stage('resolve', (args: Input, ctx) => ({ args, file: resolveInRoot(args.path, ctx.settings) })),
    stage('hash', ({ args, file }: { args: Input; file: RootedFile }, ctx): Hashed => {
      const hash = createHash(args.algorithm);
      let bytes = 0;
      for (const chunk of readChunks(file.absolute, CHUNK)) {
        ctx.checkpoint();
        hash.update(chunk);
        bytes += chunk.length;
        ctx.progress(bytes, Math.max(bytes, file.size), `hashed ${bytes} of ${file.size} bytes`);
      }
      return { algorithm: args.algorithm, digest: hash.digest('hex'), bytes, path: file.relative };
    }),
    stage('report', (r: Hashed) => ({
      content: [{ type: 'text' as const, text: `${r.algorithm} ${r.digest}  ${r.path} (${r.bytes} bytes)` }],
      structuredContent: { ...r },
    })),
  ],
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  execution: { taskSupport: 'optional' }, // long CPU work: a client may run it as a task
});
