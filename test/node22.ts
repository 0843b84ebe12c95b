/**
 * A Node 22 binary for the tools that need it (the conformance suite's `fs.globSync`, the MCP Inspector 2.x's
 * `engines: node >= 22.19`), from the npm registry's `node` package (the one network source CI has), resolved
 * once per test run and cached by npx. The servers under test stay on the test's own Node.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

let node22: Promise<string> | undefined;

/** The path of a Node 22 binary (`npx -y node@22`), fetched once and cached by npx. */
export function node22Path(): Promise<string> {
  node22 ??= promisify(execFile)('npx', ['-y', 'node@22', '-p', 'process.execPath'], { timeout: 180_000 }).then(
    ({ stdout }) => {
      const path = stdout.trim().split('\n').pop()!;
      if (!path.startsWith('/')) throw new Error(`npx -y node@22 gave no path: ${stdout}`);
      return path;
    },
  );
  return node22;
}
