/**
 * A bounded, seeded fuzz of the stdio server: thousands of mutated JSON-RPC
 * lines (flipped, inserted and deleted characters, truncation, type swaps,
 * deep nesting, huge numbers, duplicate keys, batches), mixed with real long
 * calls and their cancels. Each line is classified here, from JSON-RPC's
 * rules alone, and the server's answers are checked against that:
 * - no crash, and a valid call is served at the end;
 * - a request (an object with a string `method` and a string or number `id`)
 *   gets exactly one answer with that id, or, if a cancel named it, at most
 *   one, and every unanswered one was an accepted cancel;
 * - a notification is never answered, nor is a valid response;
 * - everything else (unparseable, invalid, too deep) gets one error with id null.
 * Set FUZZ_SEED to replay or vary a run; FUZZ_LINES to change its length.
 */
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { rng } from '../bench/lib/rng.js';
import { sleep } from './helpers.js';
import { answerCounts, LineServer } from './line-client.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261201);
const LINES = Number(process.env.FUZZ_LINES ?? 4000);
/** The server's default refusal depth; the oracle needs it to know which valid responses are refused. */
const MAX_DEPTH = 128;

class Gen {
  constructor(readonly random: () => number) {}
  int(n: number): number {
    return Math.floor(this.random() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  chance(p: number): boolean {
    return this.random() < p;
  }
}

// No digits (a mutation must not turn `ms: 5` into an hour of work) and no newline (one line stays one line).
const CHARS = [...'{}[]":,\\ ab-_.eE+ntrufl\t\r\u00e9\u2028\ud800', '\\ud800', '\\u0000'];
const SWAPS: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  1e308,
  -1e308,
  '',
  'x',
  [],
  {},
  [1, 'a', null],
  { a: { b: [] } },
  'spin',
  'ping',
];
const KEYS = [
  'id',
  'method',
  'params',
  'jsonrpc',
  'result',
  'error',
  '_meta',
  'x',
  'progressToken',
  'name',
  'arguments',
  'requestId',
];
const DEEP = '"@@DEEP@@"';

function nestedText(g: Gen): string {
  const depth = g.chance(0.25) ? 1 + g.int(MAX_DEPTH - 10) : MAX_DEPTH + 1 + g.int(8000);
  return g.chance(0.5)
    ? '['.repeat(depth) + ']'.repeat(depth)
    : '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
}

/** A valid message to start from; ids are unique per line and shaped so that one mutation rarely makes another line's id. */
function template(g: Gen, i: number): Record<string, unknown> {
  const id = g.chance(0.5) ? `q${i}z${i}` : 1_000_000 + i * 13;
  const req = (method: string, params?: unknown) => ({
    jsonrpc: '2.0',
    id,
    method,
    ...(params !== undefined && { params }),
  });
  switch (g.int(12)) {
    case 0:
    case 1:
      return req('ping');
    case 2:
    case 3:
    case 4: {
      const meta = g.chance(0.3) ? { _meta: { progressToken: g.chance(0.5) ? `t${i}` : i } } : {};
      return req('tools/call', { name: g.chance(0.9) ? 'spin' : 'no_such_tool', arguments: { ms: g.int(6) }, ...meta });
    }
    case 5:
      return req(g.pick(['tools/list', 'resources/list', 'prompts/list', 'logging/setLevel', 'no/such/method']));
    case 6:
      return req('resources/read', { uri: 'executor://stats' });
    case 7:
      return req('initialize', {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'fuzz', version: '1' },
      });
    case 8:
      return { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: `x${i}`, reason: 'fuzz' } };
    case 9:
      return {
        jsonrpc: '2.0',
        method: g.pick([
          'notifications/initialized',
          'notifications/roots/list_changed',
          'notifications/progress',
          'notifications/whatever',
        ]),
      };
    case 10:
      return { jsonrpc: '2.0', id: g.chance(0.5) ? `r${i}` : i, result: { x: 1 } };
    default:
      return { jsonrpc: '2.0', id: `e${i}`, error: { code: -32000, message: 'client says no' } };
  }
}

function structural(g: Gen, m: Record<string, unknown>, i: number): Record<string, unknown> {
  const target =
    g.chance(0.5) && typeof m.params === 'object' && m.params !== null ? (m.params as Record<string, unknown>) : m;
  const keys = Object.keys(target);
  switch (g.int(4)) {
    case 0:
      if (keys.length) target[g.pick(keys)] = g.pick(SWAPS);
      break;
    case 1:
      if (keys.length) delete target[g.pick(keys)];
      break;
    case 2:
      target[g.pick(KEYS)] = g.chance(0.5) ? g.pick(SWAPS) : `k${i}`;
      break;
    default:
      target[g.pick(['x', 'deep', 'arguments', 'result'])] = '@@DEEP@@';
  }
  return m;
}

function textual(g: Gen, text: string, i: number): string {
  const at = g.int(text.length + 1);
  switch (g.int(9)) {
    case 0:
      return text.slice(0, at) + g.pick(CHARS) + text.slice(at + 1);
    case 1:
      return text.slice(0, at) + g.pick(CHARS) + text.slice(at);
    case 2:
      return text.slice(0, at) + text.slice(at + 1);
    case 3:
      return text.slice(0, at); // truncated
    case 4: // duplicate keys: JSON.parse keeps the last
      return text.replace(
        /}$/,
        g.pick([`,"id":"dup${i}"`, ',"method":"ping"', ',"jsonrpc":"1.0"', ',"params":null', ',"id":1e400']) + '}',
      );
    case 5: // huge and odd numbers
      return text.replace(
        /("id":)(-?\d+)/,
        `$1${g.pick(['1e400', '-0', '123456789012345678901234567890', '0.1e-400', '1.5', '9007199254740993'])}`,
      );
    case 6: // a batch
      return g.pick([`[${text}]`, `[${text},${text}]`, '[]', `[${text},1]`]);
    case 7:
      return g.pick([' ', '\t', '\r', '\ufeff']) + text + g.pick(['', ' ', '\r']);
    default:
      return g.pick(['', '   ', 'null', '42', '"str"', 'true', '{}', '[[]]', '{"jsonrpc":"2.0"}', text + text]);
  }
}

interface Expected {
  /** Request id → how many request lines carried it. */
  requests: Map<unknown, number>;
  /** Ids some cancel named: answered at most once. */
  cancelNamed: Set<unknown>;
  /** Lines to be refused with id null. */
  nullAnswers: number;
}

function depthOf(value: unknown): number {
  // Iterative: the values under test are deeper than a recursive walk survives.
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    deepest = Math.max(deepest, d + 1);
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return deepest;
}

/** What JSON-RPC says the server owes for one line. */
function classify(line: string, into: Expected): void {
  if (line.trim() === '') return;
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    into.nullAnswers++;
    return;
  }
  const object =
    typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : undefined;
  if (object && typeof object.method === 'string') {
    if (!('id' in object)) {
      const requestId = (object.params as { requestId?: unknown } | undefined)?.requestId;
      if (object.method === 'notifications/cancelled' && requestId !== undefined) into.cancelNamed.add(requestId);
      return; // a notification: never answered
    }
    const id = object.id;
    if (typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))) {
      into.requests.set(id, (into.requests.get(id) ?? 0) + 1);
      return;
    }
  }
  // Not a request and not a notification: a valid response is taken in silence, anything else refused.
  if (depthOf(raw) > MAX_DEPTH || !JSONRPCMessageSchema.safeParse(raw).success) into.nullAnswers++;
}

function fuzzLines(g: Gen, count: number): { lines: string[]; longIds: string[] } {
  const lines: string[] = [];
  const longIds: string[] = [];
  const pendingCancels: [number, string][] = [];
  for (let i = 0; i < count; i++) {
    if (i % 80 === 40) {
      // A real long call, and (mostly) a cancel for it a few lines later, while it runs or waits.
      const id = `L${i}`;
      longIds.push(id);
      lines.push(
        JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'spin', arguments: { ms: 150 + g.int(250) } },
        }),
      );
      if (g.chance(0.8)) pendingCancels.push([i + 1 + g.int(60), id]);
    }
    for (const [, id] of pendingCancels.filter(([w]) => w === i))
      lines.push(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } }));
    let m = template(g, i);
    if (g.chance(0.25)) m = structural(g, m, i);
    let text = JSON.stringify(m);
    if (text.includes(DEEP)) text = text.replace(DEEP, nestedText(g));
    if (g.chance(0.05)) text = text.replace(/}$/, `,"deep":${nestedText(g)}}`);
    const rounds = g.chance(0.3) ? 0 : 1 + g.int(3);
    for (let r = 0; r < rounds; r++) text = textual(g, text, i);
    lines.push(text);
  }
  return { lines, longIds };
}

let server: LineServer | undefined;
afterEach(() => server?.kill());

describe('stdio fuzz', () => {
  it(
    `survives ${LINES} mutated lines (seed ${SEED}) and answers exactly what JSON-RPC says it owes`,
    { timeout: 120_000 },
    async () => {
      const g = new Gen(rng(SEED));
      const generated = fuzzLines(g, LINES);
      // As the server reads them: a lone surrogate goes out as U+FFFD.
      const lines = generated.lines.map((l) => Buffer.from(l, 'utf8').toString('utf8'));
      const longIds = generated.longIds;
      const expected: Expected = { requests: new Map(), cancelNamed: new Set(), nullAnswers: 0 };
      for (const line of lines) classify(line, expected);
      for (const id of longIds) expect(expected.requests.get(id), `long call ${id} is a request`).toBe(1);

      const s = (server = new LineServer(['--threads', '2', '--queue-limit', '4096']));
      await s.initialize();
      const from = s.lines.length;
      for (let i = 0; i < lines.length; i += 50) {
        s.child.stdin.write(lines.slice(i, i + 50).join('\n') + '\n');
        await sleep(5); // let cancels meet their calls while they run
      }
      const owed = [...expected.requests].filter(([id]) => !expected.cancelNamed.has(id));
      const answered = () => answerCounts(s.lines.slice(from));
      const settled = s
        .until(
          () => {
            const counts = answered();
            return (
              (counts.get(null) ?? 0) >= expected.nullAnswers && owed.every(([id, n]) => (counts.get(id) ?? 0) >= n)
            );
          },
          45_000,
          `every owed answer (seed ${SEED})`,
        )
        .then(
          () => true,
          () => false,
        ); // if not, the checks below say what is missing
      await settled;
      // The cancelled calls leave the executor; then anything extra would have arrived too.
      s.send({ jsonrpc: '2.0', id: 'final', method: 'tools/call', params: { name: 'spin', arguments: { ms: 1 } } });
      expect(await s.answer('final', 20_000, from)).toHaveProperty('result');
      let stats: Record<string, number>;
      for (let tries = 0; ; tries++) {
        s.send({ jsonrpc: '2.0', id: `stats${tries}`, method: 'resources/read', params: { uri: 'executor://stats' } });
        const m = (await s.answer(`stats${tries}`, 10_000, from)) as { result: { contents: { text: string }[] } };
        stats = JSON.parse(m.result.contents[0]!.text) as Record<string, number>;
        if (stats.inFlight === 0 || tries > 100) break;
        await sleep(100);
      }
      await sleep(300);
      const out = s.lines.slice(from);
      expect(out.filter((m) => 'unparsed' in m)).toEqual([]);
      const counts = answered();
      const ours = new Set(['final', ...Array.from({ length: 200 }, (_, k) => `stats${k}`)]);
      // Nothing answered that was not a request, with an id, and nothing twice.
      const strangers = [...counts].filter(
        ([id]) => id !== null && !expected.requests.has(id) && !ours.has(id as string),
      );
      expect(strangers, `answers to ids that no request carried (seed ${SEED})`).toEqual([]);
      expect(counts.get(null) ?? 0, `id-null refusals (seed ${SEED})`).toBe(expected.nullAnswers);
      const wrong: [unknown, number, number][] = [];
      let unanswered = 0;
      for (const [id, n] of expected.requests) {
        const got = counts.get(id) ?? 0;
        if (expected.cancelNamed.has(id)) {
          if (got > n) wrong.push([id, n, got]);
          if (got === 0) unanswered++;
        } else if (got !== n) wrong.push([id, n, got]);
      }
      const show = (id: unknown) => lines.filter((l) => l.includes(JSON.stringify(id))).map((l) => l.slice(0, 300));
      expect(
        wrong.map(([id, n, got]) => ({ id, n, got, lines: show(id) })),
        `requests answered other than once (seed ${SEED})`,
      ).toEqual([]);
      // Each unanswered call is one the server accepted a cancel for, and nothing is left running.
      expect(stats.cancelled).toBe(unanswered);
      expect(stats.inFlight).toBe(0);
      expect(unanswered).toBeGreaterThan(0); // the cancels did meet running or queued calls
      expect(s.child.exitCode).toBeNull();
    },
  );
});
