/** The example tools' one path rule: a path argument resolves under `settings.root` (else the working directory), never outside it. */
import { realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';

/** `requested` resolved under the root, through symlinks; throws when it lands outside. */
export function inRoot(requested: string, settings: Readonly<Record<string, unknown>>): string {
  const root = realpathSync(typeof settings.root === 'string' ? settings.root : process.cwd());
  const real = realpathSync(resolve(root, requested));
  const rel = relative(root, real);
  if (rel.startsWith('..') || isAbsolute(rel)) throw new Error(`path '${requested}' is outside the allowed root`);
  return real;
}
