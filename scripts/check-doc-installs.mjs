// Every `npm install <name>@<spec>` the docs give names versions the npm registry has (`npm view <name>@<spec>
// version`): a user pastes them. For a peer dependency, one of those versions must be inside the peer's range
// (package.json peerDependencies) too. The pages are those test/docs-links.test.ts reads: README.md, CONTRIBUTING.md,
// BENCHMARKS.md, PROBE.md, bench/README.md, docs/*.md and any README.md under examples/. A shell line ending in `\`
// goes on: the next line is part of it. Needs the registry, so it is not in the offline test run: .ci/run runs it
// after `npm ci`, and scripts/test-newest-peers.sh runs it first.
//   node scripts/check-doc-installs.mjs     exit 1 naming each line that does not resolve
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const semver = createRequire(import.meta.url)('semver');
const pages = [
  'README.md',
  'CONTRIBUTING.md',
  'BENCHMARKS.md',
  'PROBE.md',
  'bench/README.md',
  ...(existsSync('docs') ? readdirSync('docs') : []).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`),
  ...(existsSync('examples') ? readdirSync('examples', { recursive: true, encoding: 'utf8' }) : [])
    .filter((f) => f.endsWith('README.md'))
    .map((f) => `examples/${f}`),
].filter((page) => existsSync(page));
const peers = JSON.parse(readFileSync('package.json', 'utf8')).peerDependencies;
let bad = 0;
let checked = 0;
for (const page of pages) {
  const text = readFileSync(page, 'utf8').replace(/\\\n\s*/g, ' ');
  for (const line of text.split('\n').filter((l) => l.includes('npm install '))) {
    for (const [, name, spec] of line.matchAll(/(?:^|[\s`])((?:@[\w.-]+\/)?[\w.-]+)@([\^~<>=\d][^\s`]*)/g)) {
      checked++;
      let out = '';
      try {
        out = execFileSync('npm', ['view', `${name}@${spec}`, 'version', '--json'], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
        }).trim();
      } catch (error) {
        // npm view exits non-zero on E404 (no such package) and ETARGET/notarget (no such version).
        out = '';
        if (!/E404|ETARGET|notarget|No match found/.test(String(error.stderr ?? ''))) throw error;
      }
      const versions = out ? [JSON.parse(out)].flat() : [];
      const peer = peers[name];
      const ok = peer === undefined ? versions.length > 0 : versions.some((v) => semver.satisfies(v, peer));
      if (!ok) bad++;
      const verdict = ok ? 'ok' : peer === undefined ? 'NOT in the registry' : `NOT in the registry within ${peer}`;
      console.log(`[doc-installs] ${page}: ${name}@${spec} -> ${versions.at(-1) ?? 'no version'} ${verdict}`);
    }
  }
}
console.log(`[doc-installs] ${checked} install specs checked, ${bad} bad`);
if (bad > 0) process.exit(1);
