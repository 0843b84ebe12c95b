/**
 * Where the running mcp-cancel-pool came from, as a dependency spec another
 * project can install: the version range when it was installed from a
 * registry, else a `file:` spec to the tarball it was installed from or to
 * its own directory (a clone, `npm install -g .`, `npm link`, or a global
 * install, whose prefix keeps no record of the tarball). `init-tools`
 * writes it and the loader's hints repeat it, so a first project works
 * whether or not the package is on the registry.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const NAME = 'mcp-cancel-pool';

/** The package's own directory (dist/src/cli → the root), symlinks resolved. */
export function packageRoot(): string {
  return realpathSync(fileURLToPath(new URL('../../../', import.meta.url)));
}

/** The spec for `dependencies["mcp-cancel-pool"]`, and for `npm install <spec>` (see the module comment). */
export function dependencySpec(version: string, root = packageRoot()): { spec: string; install: string } {
  const modules = dirname(root);
  const fromDir = { spec: `file:${root}`, install: root };
  // Not inside a node_modules directory: a checkout (or what a global install from one links to).
  if (basename(modules) !== 'node_modules' || basename(root) !== NAME) return fromDir;
  const resolved = lockedResolution(modules);
  // No record of where it came from: a global install (npm keeps no lockfile in a global prefix), or another
  // package manager. This installed copy is where the running command came from, and npm can install it.
  if (resolved === undefined) return fromDir;
  if (/^https?:\/\//.test(resolved)) return { spec: `^${version}`, install: NAME };
  if (resolved.startsWith('file:')) {
    const where = resolved.slice('file:'.length);
    const tarball = isAbsolute(where) ? where : resolve(dirname(modules), where);
    if (/\.(tgz|tar\.gz)$/.test(tarball) && existsSync(tarball)) return { spec: `file:${tarball}`, install: tarball };
  }
  // A tarball that has since gone, a git URL, …: this installed copy is itself a directory npm can install.
  return fromDir;
}

/** What npm's hidden lockfile (`node_modules/.package-lock.json`) says this package was resolved from. */
function lockedResolution(modules: string): string | undefined {
  try {
    const lock = JSON.parse(readFileSync(join(modules, '.package-lock.json'), 'utf8')) as {
      packages?: Record<string, { resolved?: string }>;
    };
    return lock.packages?.[`node_modules/${NAME}`]?.resolved;
  } catch {
    return undefined;
  }
}
