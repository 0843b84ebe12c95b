// Every `npm install` line README.md and docs/ give for a peer dependency names versions the registry has, inside
// the peer's range (package.json peerDependencies): a user pastes them. Run by scripts/test-newest-peers.sh; needs
// the npm registry. A shell line ending in `\` goes on: the next line is part of it.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const semver = createRequire(import.meta.url)('semver');
const pages = [
  'README.md',
  ...readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const peers = JSON.parse(readFileSync('package.json', 'utf8')).peerDependencies;
let bad = 0;
for (const page of pages) {
  const text = readFileSync(page, 'utf8').replace(/\\\n\s*/g, ' ');
  for (const line of text.split('\n').filter((l) => l.includes('npm install '))) {
    for (const [, name, spec] of line.matchAll(/(?:^|[\s`])((?:@[\w.-]+\/)?[\w.-]+)@([\^~<>=\d][^\s`]*)/g)) {
      if (!(name in peers)) continue;
      const out = execFileSync('npm', ['view', `${name}@${spec}`, 'version', '--json'], { encoding: 'utf8' }).trim();
      const versions = out ? [JSON.parse(out)].flat() : [];
      const ok = versions.some((v) => semver.satisfies(v, peers[name]));
      if (!ok) bad++;
      console.log(
        `[doc-installs] ${page}: ${name}@${spec} -> ${versions.at(-1) ?? 'no version'} ${ok ? 'ok' : `NOT in the registry within ${peers[name]}`}`,
      );
    }
  }
}
if (bad > 0) process.exit(1);
