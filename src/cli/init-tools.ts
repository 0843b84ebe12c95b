/**
 * `mcp-cancel-pool init-tools DIR`: writes the tools-project template (an ESM
 * TypeScript project with one tool and a test, which Node runs without a build step) into a new or empty directory.
 */
import { cpSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { UsageError } from './usage-error.js';
import { dependencySpec } from './package-source.js';

/** The template, shipped in the package next to dist/. */
export const TOOLS_TEMPLATE = fileURLToPath(new URL('../../../templates/tools-project', import.meta.url));

/**
 * Copies the template to `dir` (new or empty), naming the project after the
 * directory and depending on this package where it came from (see package-source.ts).
 */
export function initTools(dir: string, version: string): string {
  const target = resolve(dir);
  if (existsSync(target)) {
    if (!statSync(target).isDirectory()) throw new UsageError(`init-tools: ${target} exists and is not a directory`);
    if (readdirSync(target).length > 0)
      throw new UsageError(`init-tools: ${target} is not empty; give a new or empty directory (nothing was written)`);
  }
  cpSync(TOOLS_TEMPLATE, target, { recursive: true });
  const manifestPath = join(target, 'package.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
    name: string;
    dependencies: Record<string, string>;
  };
  manifest.name =
    basename(target)
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[._-]+/, '') || manifest.name;
  const { spec } = dependencySpec(version);
  manifest.dependencies['mcp-cancel-pool'] = spec;
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  return spec;
}

/** Registers the command on the program. */
export function registerInitTools(program: Command, version: string): void {
  program
    .command('init-tools')
    .argument('<dir>', 'new or empty directory to write the project into')
    .description(
      'Write a starter tools project (package.json, tsconfig.json, one TypeScript tool Node runs as written, a test) into DIR.',
    )
    .action((dir: string) => {
      const spec = initTools(dir, version);
      process.stderr.write(
        `[mcp-cancel-pool] wrote a tools project to ${resolve(dir)} (it depends on mcp-cancel-pool ${spec})\n` +
          `  cd ${dir} && npm install && npm test     # type-checks src/my-tools.ts and serves it to a real client\n` +
          `  npx mcp-cancel-pool serve --tools src/my-tools.ts\n`,
      );
    });
}
