/**
 * `sha256_chunked`: the SHA-256 of a file, read and hashed in 1 MiB chunks with a
 * `ctx.checkpoint()` between chunks: the pattern for any library with a
 * chunked API (node:crypto's `update`, zlib's streaming compressors, a
 * parser fed piece by piece). The check costs one atomic load; a chunk costs
 * about a millisecond, so a cancel waits about that long.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { defineTool, z, type StageContext } from 'mcp-cancel-pool/tools';
import { inRoot } from './root.js';

const CHUNK = 1024 * 1024;

export default defineTool({
  name: 'sha256_chunked',
  description: 'The SHA-256 of a file under the server’s root, hashed in 1 MiB chunks.',
  input: z.object({ path: z.string() }),
  cancelWithinMs: 50,
  examples: [{ path: 'package-lock.json' }],
  stages: [
    function hash({ path }: { path: string }, ctx: StageContext) {
      const fd = openSync(inRoot(path, ctx.settings), 'r');
      try {
        const size = fstatSync(fd).size;
        const sha = createHash('sha256');
        const buf = Buffer.allocUnsafe(CHUNK);
        let done = 0;
        for (let n; (n = readSync(fd, buf, 0, CHUNK, null)) > 0; done += n) {
          ctx.checkpoint();
          sha.update(buf.subarray(0, n));
          ctx.progress(done + n, size);
        }
        return { path, bytes: done, sha256: sha.digest('hex') };
      } finally {
        closeSync(fd);
      }
    },
  ],
});
