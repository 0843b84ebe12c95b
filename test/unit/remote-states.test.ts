/**
 * The remote call's one table (src/remote/lua/call-states.ts) against the Lua that implements it: every script names
 * job states only through the generated constants, each script writes exactly the states the table says it moves a
 * job to, and guards them by the table's `from` states; plus the front end's gauges derived from its call states.
 */
import { describe, expect, it } from 'vitest';
import {
  callStateOf,
  countedAs,
  JOB_TRANSITIONS,
  JobStatus,
  LUA_JOB_STATUS,
  luaStatusName,
  type FrontState,
  type JobStatusName,
} from '../../dist/src/remote/lua/call-states.js';
import * as lua from '../../dist/src/remote/lua/job-lua.js';
import * as askLua from '../../dist/src/remote/lua/ask-lua.js';
import * as taskLua from '../../dist/src/remote/lua/task-lua.js';
import * as taskInputLua from '../../dist/src/remote/lua/task-input-lua.js';

const SCRIPTS: Record<string, string> = { ...lua, ...askLua, ...taskLua, ...taskInputLua };
const STATES = Object.keys(JobStatus) as JobStatusName[];
const LUA_NAME = new Map(STATES.map((s) => [luaStatusName(s), s]));

/** The job-state writes of a script: `HSET(<job>, 's', STATE)`. */
function writes(script: string): Set<JobStatusName> {
  return new Set([...script.matchAll(/redis\.call\('HSET', [^,]+, 's', ([A-Z]+)/g)].map((m) => LUA_NAME.get(m[1]!)!));
}

describe('the remote job states: one table, the Lua checked against it', () => {
  it('the Lua constants are generated from the table', () => {
    for (const s of STATES) expect(LUA_JOB_STATUS).toContain(luaStatusName(s));
    expect(LUA_JOB_STATUS.trim()).toBe(
      `local QUEUED, RUNNING, RESPONDING, CANCELLED, FAILED, REFUSED = 'queued', 'running', 'responding', 'cancelled', 'failed', 'refused'`,
    );
  });

  it('no script spells a job state as a string: each that reads or writes `s` starts with the generated constants', () => {
    for (const [name, script] of Object.entries(SCRIPTS)) {
      const body = script.replace(LUA_JOB_STATUS, '');
      expect(body, name).not.toMatch(new RegExp(`'(${STATES.join('|')})'`));
      if ([...LUA_NAME.keys()].some((c) => new RegExp(`\\b${c}\\b`).test(body)))
        expect(script.startsWith(LUA_JOB_STATUS), name).toBe(true);
    }
  });

  it('every script writes exactly the states the table moves a job to by it', () => {
    const expected = new Map<string, Set<JobStatusName>>();
    for (const t of Object.values(JOB_TRANSITIONS)) {
      expect(SCRIPTS[t.script], t.script).toBeTypeOf('string');
      expected.set(t.script, (expected.get(t.script) ?? new Set()).add(t.to));
    }
    for (const [name, script] of Object.entries(SCRIPTS))
      expect([...writes(script)].sort(), name).toEqual([...(expected.get(name) ?? [])].sort());
  });

  it('a script moving a job out of a state guards by the table’s `from` states', () => {
    for (const [name, t] of Object.entries(JOB_TRANSITIONS)) {
      if (t.from.length === 0) continue;
      const script = SCRIPTS[t.script]!;
      // Either each from-state is compared (s == X, ~= X) or the script refuses all but them.
      for (const from of t.from)
        expect(script, `${name}: ${from}`).toMatch(new RegExp(`[=~]= ${luaStatusName(from)}\\b`));
    }
  });

  it('every state is reached by some transition, and only queued and running are left', () => {
    const reached = new Set(Object.values(JOB_TRANSITIONS).map((t) => t.to));
    expect([...reached].sort()).toEqual([...STATES].sort());
    const left = new Set(Object.values(JOB_TRANSITIONS).flatMap((t) => [...t.from]));
    expect([...left].sort()).toEqual(['queued', 'running']);
  });
});

describe('the front end’s call states', () => {
  it('count as queued, running or neither, from the state alone', () => {
    const job = { jobId: 'j', options: { tool: 't', args: {} }, inRedis: Promise.resolve(true) };
    const decision = Promise.resolve('cancelled-queued' as const);
    const cases: [FrontState, ReturnType<typeof countedAs>][] = [
      [{ kind: 'reserved' }, undefined],
      [{ kind: 'submitting', job }, 'queued'],
      [{ kind: 'queued', job }, 'queued'],
      [{ kind: 'running', job, host: 'h' }, 'running'],
      [{ kind: 'cancelling', job, from: 'queued', decision }, 'queued'],
      [{ kind: 'cancelling', job, from: 'running', decision }, 'running'],
      [{ kind: 'settled', outcome: { kind: 'cancelled', from: 'running', hardKilled: false } }, undefined],
    ];
    for (const [state, counted] of cases) expect(countedAs(state), state.kind).toBe(counted);
  });

  it('mean to the server: queued until a host runs it, cancelling while Redis decides, then the outcome', () => {
    const job = { jobId: 'j', options: { tool: 't', args: {} }, inRedis: Promise.resolve(true) };
    const decision = Promise.resolve('too-late' as const);
    expect(callStateOf({ kind: 'reserved' })).toBe('queued');
    expect(callStateOf({ kind: 'submitting', job })).toBe('queued');
    expect(callStateOf({ kind: 'queued', job })).toBe('queued');
    expect(callStateOf({ kind: 'running', job, host: 'h' })).toBe('running');
    expect(callStateOf({ kind: 'cancelling', job, from: 'running', decision })).toBe('cancelling');
    expect(callStateOf({ kind: 'settled', outcome: { kind: 'timedOut', timeoutMs: 5, hardKilled: false } })).toBe(
      'timedOut',
    );
  });
});
