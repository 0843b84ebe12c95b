/**
 * The figures and versions the docs quote are the ones that hold (issue 63),
 * offline: the install's package count, size and tarball size are those of
 * docs/figures.json (which test/packaging.test.ts checks against a real pack
 * and install); the Node line is `engines`' (and the MCP Bundle manifest's);
 * each `npm install <peer>@<spec>` line asks for versions inside the peer's
 * range; a dependency named with a version (`fastmcp 4.20.16`,
 * `@modelcontextprotocol/inspector` 2.12.0) is the version the lockfile
 * installs. Whether the registry has them is scripts/check-doc-installs.mjs's
 * question (run by scripts/test-newest-peers.sh, which needs the registry);
 * the conformance totals are checked by the conformance tests' own runs.
 * docs/serving.md's "Command line" names every flag `serve --help` has, and
 * README's headline figures are numbers the committed benchmark run printed.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './cli-helpers.js';
import { PAGES } from './doc-blocks.js';
import { quoted, readFigures } from './doc-figures.js';
import { CLI } from './helpers.js';

const semver = createRequire(import.meta.url)('semver') as {
  subset(range: string, of: string): boolean;
  minVersion(range: string): { version: string } | null;
};
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};
const text = (page: string) => readFileSync(join(ROOT, page), 'utf8');
/** Every match of `pattern` on every page, as `page: match`. */
const everywhere = (pattern: RegExp) =>
  PAGES.filter((p) => p !== 'CHANGELOG.md').flatMap((page) =>
    [...text(page).matchAll(pattern)].map((m) => ({ page, m })),
  );

describe('install figures', () => {
  const figures = readFigures();
  const q = quoted(figures);

  it('docs/figures.json holds a measurement', () => {
    expect(figures.defaultInstall.packages).toBeGreaterThan(0);
    expect(figures.defaultInstall.kilobytes).toBeGreaterThan(0);
    expect(figures.tarballBytes).toBeGreaterThan(0);
  });

  it(`every "N packages, M MB" is the measured install (${q.install}), README's included`, () => {
    const found = everywhere(/\b\d+\s+packages,\s+\d+\s+MB\b/g);
    expect(found.map((f) => f.page)).toContain('README.md');
    expect(found.filter((f) => f.m[0].replace(/\s+/g, ' ') !== q.install).map((f) => `${f.page}: ${f.m[0]}`)).toEqual(
      [],
    );
  });

  it(`every "N KB now" is the measured tarball (${q.tarball}), docs/install.md's included`, () => {
    const found = everywhere(/\b\d+\s+KB\s+now\b/g);
    expect(found.map((f) => f.page)).toContain('docs/install.md');
    expect(found.filter((f) => f.m[0].replace(/\s+/g, ' ') !== q.tarball).map((f) => `${f.page}: ${f.m[0]}`)).toEqual(
      [],
    );
  });
});

describe('versions', () => {
  const oldest = semver.minVersion(manifest.engines.node)!.version; // 22.18.0

  it(`every "Node.js X or newer" and "engines: >=X" is engines' ${manifest.engines.node}`, () => {
    const found = everywhere(/Node(?:\.js)?\s+\**(\d+\.\d+)\s+(?:or|and)\s+newer|`engines: (>=[\d.]+)`/g);
    expect(found.length).toBeGreaterThan(2);
    const short = oldest.replace(/\.0$/, '');
    const wrong = found.filter((f) => (f.m[1] ?? f.m[2]) !== short && f.m[2] !== manifest.engines.node);
    expect(wrong.map((f) => `${f.page}: ${f.m[0]}`)).toEqual([]);
  });

  it('the MCP Bundle manifest asks a desktop client for the same Node', () => {
    const bundle = JSON.parse(text('bundle/manifest.json')) as { compatibility: { runtimes: { node: string } } };
    expect(bundle.compatibility.runtimes.node).toBe(`>=${oldest}`);
  });

  it('every dependency the docs name with a version is at that version in package.json', () => {
    const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    const found = Object.entries({ ...manifest.dependencies, ...manifest.devDependencies }).flatMap(([name, spec]) => {
      const version = spec.replace(/^npm:.*@/, ''); // conformance-next is an alias
      const short = name.replace(/^@[^/]+\//, ''); // server-everything, not server or node
      const names = short !== name && short.includes('-') ? [name, short] : [name];
      return names.flatMap((n) =>
        everywhere(
          new RegExp(`(?<![\\w@/-])\`?${escape(n)}\`?\\s+\\**v?(\\d+\\.\\d+(?:\\.\\d+)?(?:-[\\w.]+)?)`, 'g'),
        ).map((f) => ({ ...f, version })),
      );
    });
    expect(found.length).toBeGreaterThan(5);
    const wrong = found.filter((f) => !f.version.startsWith(f.m[1]!));
    expect(wrong.map((f) => `${f.page}: ${f.m[0]} (package.json: ${f.version})`)).toEqual([]);
  });

  it("every `npm install <peer>@<spec>` of the docs asks for versions inside the peer's range", () => {
    const lines = everywhere(/npm install (?:[^\n`\\]|\\\n)+/g);
    const specs = lines.flatMap(({ page, m }) =>
      [...m[0].matchAll(/(?:^|\s)((?:@[\w.-]+\/)?[\w.-]+)@([\^~<>=\d][^\s`]*)/g)]
        .filter((s) => s[1]! in manifest.peerDependencies)
        .map((s) => ({ page, name: s[1]!, spec: s[2]! })),
    );
    expect(specs.length).toBeGreaterThan(5);
    const outside = specs.filter((s) => !semver.subset(s.spec, manifest.peerDependencies[s.name]!));
    expect(
      outside.map((s) => `${s.page}: ${s.name}@${s.spec} (peer range ${manifest.peerDependencies[s.name]})`),
    ).toEqual([]);
  });
});

describe('docs/serving.md "Command line"', () => {
  it('names the flags `serve --help` lists, no more and no fewer', () => {
    const flags = (text: string) => [...new Set([...text.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1]!))].sort();
    const help = execFileSync(process.execPath, [CLI, 'serve', '--help'], { encoding: 'utf8' });
    const page = /^mcp-cancel-pool serve \[options\]\n([^]*?)^mcp-cancel-pool worker/m.exec(
      text('docs/serving.md'),
    )![1]!;
    expect(flags(help).length).toBeGreaterThan(40);
    expect(flags(page)).toEqual(flags(help).filter((f) => f !== '--help'));
  });
});

describe("README's headline figures", () => {
  it('each is in the committed full run (bench/results/full/results.json), a pooled one in BENCHMARKS.md', () => {
    const table = /## Headline figures[^]*?\n(\| what[^]*?)\n\n/.exec(text('README.md'))![1]!;
    const run = JSON.parse(text('bench/results/full/results.json')) as {
      scenarios: { targets?: unknown; headline?: unknown; tables?: unknown }[];
    };
    // Every number the run's targets, headlines and tables print (not the raw samples).
    const printed = new Set(
      JSON.stringify(run.scenarios.map((s) => [s.targets, s.headline, s.tables])).match(/\d+\.\d+/g) ?? [],
    );
    const benchmarks = text('BENCHMARKS.md');
    const rows = table.split('\n').slice(2);
    expect(rows.length).toBeGreaterThan(5);
    const unsourced = rows.flatMap((row) => {
      const [what, ours, against] = row
        .split('|')
        .slice(1, 4)
        .map((c) => c.trim()) as [string, string, string];
      const figures = `${ours} ${against}`.match(/\d+\.\d+/g) ?? [];
      const pooled = /pooled over/.test(what);
      return figures
        .filter((n) => (pooled ? !benchmarks.includes(`${n}×`) : !printed.has(n)))
        .map((n) => `${what}: ${n}`);
    });
    expect(unsourced).toEqual([]);
  });
});
