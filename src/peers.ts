/**
 * Optional peer dependencies. What only one audience needs is not installed
 * with the package (package.json `peerDependenciesMeta`): the cancel-aware
 * client (`@modelcontextprotocol/client`), many hosts on Redis (`bullmq`,
 * `ioredis`), the probe's charts (`vega`, `vega-lite`). The import or command
 * that needs one checks for it first and, when it is missing, stops with one
 * line naming the `npm install` to run, instead of Node's "Cannot find
 * package" from deep inside this package.
 */
import { readFileSync } from 'node:fs';
import { McpCancelPoolError } from './errors.js';

/** An optional peer dependency that a feature needs is not installed. */
export class MissingPeerError extends McpCancelPoolError {
  constructor(
    /** The packages missing, e.g. `['bullmq', 'ioredis']`. */
    readonly packages: readonly string[],
    /** The command to run: `npm install <name>@<range> …`. */
    readonly install: string,
    what: string,
  ) {
    super(
      'ERR_MISSING_PEER',
      `${what} needs ${packages.join(' and ')} (optional, not installed with mcp-cancel-pool): ${install}`,
    );
  }
}

/** The ranges this package declares for its peers (read once, from its own package.json). */
let ranges: Record<string, string> | undefined;
function rangeOf(name: string): string | undefined {
  ranges ??=
    (
      JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
        peerDependencies?: Record<string, string>;
      }
    ).peerDependencies ?? {};
  return ranges[name];
}

/** Whether `name` resolves from this package, as its own imports of it would. */
function installed(name: string): boolean {
  try {
    import.meta.resolve(name);
    return true;
  } catch {
    return false;
  }
}

/** The packages of `names` that are missing, and the `npm install` line that adds them (undefined when none is). */
export function missingPeers(names: readonly string[]): { packages: string[]; install: string } | undefined {
  const packages = names.filter((n) => !installed(n));
  if (packages.length === 0) return undefined;
  const specs = packages.map((n) => {
    const range = rangeOf(n);
    return range === undefined ? n : `${n}@${range}`;
  });
  return { packages, install: `npm install ${specs.join(' ')}` };
}

/**
 * Loads what `load` imports once `names` are installed; throws a
 * {@link MissingPeerError} naming the `npm install` to run otherwise.
 * `what` names the feature for the message (`mcp-cancel-pool/remote`,
 * `serve --redis`, …).
 */
export async function withPeers<T>(what: string, names: readonly string[], load: () => Promise<T>): Promise<T> {
  const missing = missingPeers(names);
  if (missing) throw new MissingPeerError(missing.packages, missing.install, what);
  return load();
}
