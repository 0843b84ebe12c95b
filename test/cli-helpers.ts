/** Running the command line and npm as subprocesses, for the CLI and packaging tests. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `command args` to its end with stdin left open (a server must end by itself), killing it after `ms`.
 * npm's per-script variables of the outer `npm test` are dropped, so a nested npm behaves as in a fresh shell.
 */
export function run(
  command: string,
  args: string[],
  options: { cwd?: string; ms?: number; shell?: boolean; env?: Record<string, string> } = {},
): Promise<Ran> {
  const env = {
    ...Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !/^npm_(lifecycle|package)_/.test(k) && k !== 'npm_config_loglevel'),
    ),
    ...options.env,
  };
  const child = spawn(command, args, { cwd: options.cwd ?? ROOT, env, stdio: 'pipe', shell: options.shell ?? false });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const ms = options.ms ?? 30_000;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `${command} ${args.join(' ')} did not end within ${ms} ms; stdout: ${stdout.slice(-500)}; stderr: ${stderr.slice(-500)}`,
        ),
      );
    }, ms);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The non-empty lines of a text. */
export const lines = (text: string): string[] => text.split('\n').filter((l) => l.trim() !== '');
