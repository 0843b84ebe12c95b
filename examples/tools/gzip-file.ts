/**
 * `gzip_file`: compresses a file with Debian's `gzip -9`, a real program
 * driven from a stage, with progress from the bytes fed to it. The child is
 * started in its own process group and the call's `ctx.signal` is honoured:
 * on a stop the whole group gets SIGKILL, so neither `gzip` nor anything it
 * started outlives the call. (The naive way, `child.kill()` of the direct
 * child or ignoring the signal, leaves a shell's grandchildren or the whole
 * run behind: bench/wait-kinds.ts measures both.)
 */
import { spawn } from 'node:child_process';
import { createReadStream, statSync } from 'node:fs';
import { defineTool, z, type StageContext } from 'mcp-cancel-pool/tools';
import { inRoot } from './root.js';

export default defineTool({
  name: 'gzip_file',
  description: 'Compresses a file under the server’s root with gzip -9; returns the compressed size.',
  input: z.object({ path: z.string() }),
  // Waits on a child process, checking ctx.signal: the stage's await is not a check the runtime can see.
  cancelWithinMs: 60_000,
  examples: [{ path: 'package-lock.json' }],
  stages: [
    async function compress({ path }: { path: string }, ctx: StageContext) {
      const file = inRoot(path, ctx.settings);
      const size = statSync(file).size;
      const child = spawn('gzip', ['-9', '-c'], { detached: true, stdio: ['pipe', 'pipe', 'ignore'] });
      const killGroup = () => {
        try {
          process.kill(-child.pid!, 'SIGKILL'); // the group: gzip and anything it started
        } catch {
          /* already gone */
        }
      };
      ctx.signal.addEventListener('abort', killGroup, { once: true });
      let fed = 0;
      let out = 0;
      const input = createReadStream(file);
      input.on('data', (chunk) => {
        fed += chunk.length;
        ctx.progress(fed, size);
      });
      input.pipe(child.stdin).on('error', () => {});
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.length));
      try {
        const code = await new Promise<number | null>((resolve, reject) => {
          child.once('error', reject);
          child.once('close', resolve);
        });
        ctx.checkpoint(); // stopped: the group was killed; nothing is answered
        if (code !== 0) throw new Error(`gzip exited with code ${code}`);
        return { path, bytes: size, compressed: out };
      } finally {
        ctx.signal.removeEventListener('abort', killGroup);
        input.destroy();
      }
    },
  ],
});
