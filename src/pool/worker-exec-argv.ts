/**
 * The node flags a pool's workers start with. Given explicitly, a worker's
 * execArgv replaces what it would inherit and is checked: V8 and process-wide
 * flags (`--max-old-space-size`, `--stack-size`, `--title`) make `new Worker`
 * throw, so a server started as `node --max-old-space-size=512 …` could not
 * start a single worker. Those flags still apply to the main thread; the
 * workers' heaps are set by `resourceLimits` instead.
 */
import { Worker } from 'node:worker_threads';

/** A flag no worker accepts: it makes the check below throw before any thread starts. */
const ALWAYS_INVALID = '--title=mcp-cancel-pool-probe';

/** The flags a worker rejects among `flags`, read from Node's own check; undefined if it could not be read. */
function rejectedFlags(flags: readonly string[]): Set<string> | undefined {
  try {
    // Never runs: the sentinel makes the constructor throw synchronously.
    void new Worker('', { eval: true, execArgv: [...flags, ALWAYS_INVALID] }).terminate();
    return undefined;
  } catch (e) {
    const err = e as { code?: string; message?: string };
    const listed = /flags: (.*)$/.exec(err.message ?? '');
    if (err.code !== 'ERR_WORKER_INVALID_EXEC_ARGV' || !listed) return undefined;
    return new Set(listed[1]!.split(', '));
  }
}

/**
 * `parent` (normally `process.execArgv`) without the flags a worker rejects,
 * followed by `extra`. If Node's answer cannot be read, only `extra`.
 */
export function workerExecArgv(parent: readonly string[], extra: readonly string[]): string[] {
  if (parent.length === 0) return [...extra];
  const rejected = rejectedFlags([...parent, ...extra]);
  if (!rejected) return [...extra];
  const kept = [...parent.filter((f) => !rejected.has(f)), ...extra];
  // A flag given as two words (`--stack-size 900`) leaves its value behind: check the result once more.
  const still = rejectedFlags(kept);
  return still && still.size === 1 ? kept : [...extra];
}
