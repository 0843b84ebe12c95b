/**
 * The layers of src/, pinned: no import cycle anywhere (type-only imports
 * count: a cycle of types is still two files that cannot be read apart), and
 * each lower layer imports nothing above it. Reads the sources, so a new
 * import that breaks a layer fails here, naming the file and the import.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = join(dir, e);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** src-relative file → the src-relative files it imports (static, dynamic, re-exports; types included). */
function graph(): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const file of sources(SRC)) {
    const text = readFileSync(file, 'utf8');
    const deps = new Set<string>();
    for (const m of text.matchAll(
      /(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s+'(\.[^']+)'|import\('(\.[^']+)'\)|(?:^|\n)\s*import\s+'(\.[^']+)'/g,
    )) {
      const spec = m[1] ?? m[2] ?? m[3]!;
      deps.add(relative(SRC, resolve(dirname(file), spec)).replace(/\.js$/, '.ts'));
    }
    g.set(relative(SRC, file), [...deps]);
  }
  return g;
}

/** Strongly connected components with more than one file (or a file importing itself). */
function cycles(g: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of g.get(v) ?? []) {
      if (!g.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (g.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of g.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** Each layer (a folder of src/) and the folders it must never import. */
const FORBIDDEN: Record<string, readonly string[]> = {
  state: [
    'stages',
    'backend',
    'executor',
    'pool',
    'remote',
    'server',
    'transport',
    'tasks',
    'client',
    'cli',
    'wire',
    'admission',
    'probe',
  ],
  stages: ['tasks', 'backend', 'executor', 'pool', 'remote', 'server', 'transport', 'client', 'cli', 'probe'],
  backend: ['executor', 'pool', 'remote', 'server', 'transport', 'tasks', 'client', 'cli', 'probe'],
  remote: ['server', 'transport', 'tasks', 'client', 'cli', 'probe'],
  executor: ['remote', 'server', 'transport', 'tasks', 'client', 'cli', 'probe'],
  wire: ['executor', 'remote', 'server', 'transport', 'tasks', 'client', 'cli', 'probe'],
  // Asking the client: the core (questions, MRTR rounds and waits, the signed state); the server, tasks, remote and
  // client hold the thin parts that carry its questions over their own wire, and import it.
  asks: ['server', 'transport', 'tasks', 'remote', 'client', 'cli', 'probe'],
};

const layerOf = (file: string) => (file.includes('/') ? file.slice(0, file.indexOf('/')) : '.');

/**
 * Every folder of src/ (and `.`, its root files) and the only folders it may import: a new arrow between folders,
 * or a new folder, fails here until it is named (docs/architecture.md draws the same table).
 */
const ALLOWED: Record<string, readonly string[]> = {
  // The root files: errors, defaults, issues (imported by all), and the entry points that assemble the rest.
  '.': ['backend', 'embed', 'executor', 'otel', 'pool', 'stages', 'state', 'wire'],
  state: [],
  log: [],
  stages: ['.'],
  wire: ['state'],
  pool: ['stages'],
  admission: ['pool'],
  backend: ['.', 'stages', 'state', 'wire'],
  // A job's spans are made through executor/job-tracing.ts, which otel/job-trace.ts fills: no arrow into otel/.
  executor: ['.', 'admission', 'backend', 'log', 'pool', 'stages', 'state', 'wire'],
  otel: ['backend', 'executor', 'pool', 'state'],
  asks: ['backend', 'otel', 'stages', 'state'],
  tasks: ['.', 'asks', 'backend', 'otel', 'server', 'stages', 'state'],
  server: ['.', 'asks', 'backend', 'log', 'otel', 'stages', 'state', 'tasks', 'wire'],
  remote: ['.', 'asks', 'backend', 'executor', 'log', 'otel', 'stages', 'state', 'wire'],
  transport: ['.', 'asks', 'backend', 'log', 'server', 'stages', 'tasks', 'wire'],
  client: ['.', 'state', 'wire'],
  ops: ['backend', 'executor', 'remote', 'server', 'state', 'tasks', 'wire'],
  embed: ['.', 'asks', 'backend', 'executor', 'ops', 'otel', 'server', 'state', 'tasks', 'wire'],
  entries: ['.', 'asks', 'backend', 'ops', 'server', 'tasks', 'transport'],
  probe: ['.'],
  cli: [
    '.',
    'asks',
    'backend',
    'executor',
    'log',
    'ops',
    'otel',
    'pool',
    'probe',
    'remote',
    'server',
    'stages',
    'tasks',
    'transport',
  ],
};

/** What the worker threads' code (workers/, outside src/) may import of src/: the stages API, the pool's messages, the state word. */
const WORKERS_ALLOWED = ['.', 'stages', 'pool', 'state'];

/**
 * The rooms of remote/ and the rooms each must never import: the worker host and the front end meet only in Redis
 * (their Lua, their messages), the Lua knows no caller, and where Redis is knows nothing of what runs on it.
 */
const REMOTE_FORBIDDEN: Record<string, readonly string[]> = {
  'remote/host': ['remote/front', 'remote/tasks'],
  'remote/tasks': ['remote/front', 'remote/host'],
  'remote/lua': ['remote/front', 'remote/host', 'remote/tasks', 'remote/config'],
  'remote/config': ['remote/front', 'remote/host', 'remote/tasks', 'remote/lua'],
};

/** `remote/<room>` for a file in a room of remote/, else undefined. */
const roomOf = (file: string) => /^(remote\/[^/]+)\//.exec(file)?.[1];

describe('the import graph of src/', () => {
  const g = graph();

  it('reads the whole tree (the parser sees the imports)', () => {
    expect(g.size).toBeGreaterThan(50);
    expect(g.get('remote/front/queue-backend.ts')).toContain('remote/front/remote-call.ts');
  });

  it('has no cycle', () => {
    expect(cycles(g)).toEqual([]);
  });

  for (const [layer, banned] of Object.entries(FORBIDDEN)) {
    it(`${layer}/ imports nothing from ${banned.join(', ')}`, () => {
      const bad: string[] = [];
      for (const [file, deps] of g) {
        if (layerOf(file) !== layer) continue;
        for (const dep of deps) if (banned.includes(layerOf(dep))) bad.push(`${file} → ${dep}`);
      }
      expect(bad).toEqual([]);
    });
  }

  it('names every folder of src/ in the layering table', () => {
    const folders = [...new Set([...g.keys()].map(layerOf))].sort();
    expect(Object.keys(ALLOWED).sort()).toEqual(folders);
  });

  for (const [layer, allowed] of Object.entries(ALLOWED)) {
    it(`${layer === '.' ? 'the root files' : `${layer}/`} import${allowed.length === 0 ? ' no other folder' : ` only from ${allowed.join(', ')}`}`, () => {
      const bad: string[] = [];
      for (const [file, deps] of g) {
        if (layerOf(file) !== layer) continue;
        for (const dep of deps) {
          const to = layerOf(dep);
          if (to !== layer && !allowed.includes(to)) bad.push(`${file} → ${dep}`);
        }
      }
      expect(bad).toEqual([]);
    });
  }

  it(`workers/ imports of src/ only ${WORKERS_ALLOWED.join(', ')}`, () => {
    const WORKERS = resolve(SRC, '..', 'workers');
    const bad: string[] = [];
    let seen = 0;
    for (const file of sources(WORKERS)) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:import|export)\s[^'";]*?from\s+'(\.[^']+)'|import\('(\.[^']+)'\)/g)) {
        const target = resolve(dirname(file), m[1] ?? m[2]!);
        const inSrc = relative(SRC, target);
        if (inSrc.startsWith('..')) continue; // workers/ itself, or the dist copy of it
        seen++;
        if (!WORKERS_ALLOWED.includes(layerOf(inSrc))) bad.push(`${relative(WORKERS, file)} → src/${inSrc}`);
      }
    }
    expect(seen).toBeGreaterThan(0);
    expect(bad).toEqual([]);
  });

  for (const [room, banned] of Object.entries(REMOTE_FORBIDDEN)) {
    it(`${room}/ imports nothing from ${banned.join(', ')}`, () => {
      const bad: string[] = [];
      for (const [file, deps] of g) {
        if (roomOf(file) !== room) continue;
        for (const dep of deps) if (banned.includes(roomOf(dep) ?? '')) bad.push(`${file} → ${dep}`);
      }
      expect(bad).toEqual([]);
    });
  }

  it('the root entry carries no remote runtime (that is mcp-cancel-pool/remote), and errors.ts imports only types', () => {
    expect((g.get('index.ts') ?? []).filter((d) => d.startsWith('remote/'))).toEqual([]);
    expect(readFileSync(join(SRC, 'errors.ts'), 'utf8')).not.toMatch(/^import (?!type )/m);
  });
});
