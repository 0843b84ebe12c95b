/**
 * `gzip_file`: compresses a file with Debian's `gzip -9` through `ctx.spawn`, as a shell pipeline (`dd | gzip |
 * wc`), with progress parsed from `dd`'s own progress meter. The pipeline is one process group: a stop ends the
 * shell and the three programs it started, and the stage's await rejects, so nothing is answered. (The naive ways,
 * ignoring the signal or `child.kill()` of the shell alone, leave `dd | gzip | wc` running to the end:
 * bench/wait-kinds.ts measures both.)
 */
import { statSync } from 'node:fs';
import { defineTool, z, type StageContext } from 'mcp-cancel-pool/tools';
import { inRoot } from './root.js';

/** The pipeline, the file as `$1`; dd reports its progress on stderr, wc prints the compressed size. */
export const GZIP_PIPELINE = 'dd if="$1" bs=1M status=progress | gzip -9 | wc -c';

export default defineTool({
  name: 'gzip_file',
  description: 'Compresses a file under the server’s root with gzip -9; returns the compressed size.',
  input: z.object({ path: z.string() }),
  examples: [{ path: 'package-lock.json' }],
  stages: [
    async function compress({ path }: { path: string }, ctx: StageContext) {
      const file = inRoot(path, ctx.settings);
      const size = statSync(file).size;
      ctx.progress(0, size, 'compressing');
      const { stdout } = await ctx.spawn('sh', ['-c', GZIP_PIPELINE, 'sh', file], {
        // dd redraws "<n> bytes (…) copied, …" with \r each second, and writes the last one with \n.
        onStderrLine: (line) => {
          const copied = /^(\d+) bytes/.exec(line);
          if (copied) ctx.progress(Number(copied[1]), size);
        },
      });
      return { path, bytes: size, compressed: Number(stdout.trim()) };
    },
  ],
});
