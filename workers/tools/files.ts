/**
 * Shared by the file tools: confines paths to the configured root and reads
 * files in chunks, so callers can check for cancellation between chunks.
 */
import { closeSync, constants, fstatSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';

/** A file inside the root, resolved through any symlinks. */
export interface RootedFile {
  /** The real path on disk. */
  readonly absolute: string;
  /** The path relative to the root, with forward slashes. */
  readonly relative: string;
  /** Size in bytes when resolved. */
  readonly size: number;
}

/** The directory file tools may read: `settings.root`, else the working directory. */
export function rootOf(settings: Readonly<Record<string, unknown>>): string {
  const configured = settings.root;
  if (configured !== undefined && typeof configured !== 'string')
    throw new Error('tool setting `root` must be a string');
  const root = configured ?? process.cwd();
  try {
    return realpathSync(root);
  } catch (error) {
    throw new Error(`the allowed root '${root}' is not accessible: ${(error as Error).message}`, { cause: error });
  }
}

function inside(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * Resolves `requested` against the root and rejects anything that lands
 * outside it, before and after following symlinks (a link inside the root may
 * point anywhere).
 */
export function resolveInRoot(requested: string, settings: Readonly<Record<string, unknown>>): RootedFile {
  const root = rootOf(settings);
  const lexical = resolve(root, requested);
  // Checked before realpath so a missing outside path is reported as outside, not as missing.
  if (!inside(root, lexical)) throw new Error(`path '${requested}' is outside the allowed root`);
  let real: string;
  try {
    real = realpathSync(lexical);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(
      code === 'ENOENT'
        ? `path '${requested}' does not exist under the allowed root`
        : `cannot resolve path '${requested}': ${(error as Error).message}`,
      { cause: error },
    );
  }
  if (!inside(root, real)) throw new Error(`path '${requested}' is outside the allowed root (through a symlink)`);
  const stats = statSync(real);
  if (!stats.isFile()) throw new Error(`path '${requested}' is not a regular file`);
  return { absolute: real, relative: relative(root, real).split(sep).join('/'), size: stats.size };
}

/**
 * Yields a file's contents in fresh buffers of up to `chunkSize` bytes. Sync
 * reads keep each chunk's cost bounded and let the caller checkpoint between them.
 */
export function* readChunks(path: string, chunkSize: number): Generator<Buffer, void, undefined> {
  // O_NOFOLLOW: a symlink swapped in after resolving must not be followed.
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  try {
    // The file may have changed since it was resolved; stat the open descriptor.
    if (!fstatSync(fd).isFile()) throw new Error('not a regular file');
    let position = 0;
    for (;;) {
      const buffer = Buffer.allocUnsafe(chunkSize);
      const n = readSync(fd, buffer, 0, chunkSize, position);
      if (n === 0) return;
      position += n;
      yield buffer.subarray(0, n);
    }
  } finally {
    closeSync(fd);
  }
}
