/**
 * A connection's calls (src/server/tool-calls.ts) at the door, against the
 * scripted backend: what a `tools/call` is gets decided once, as it arrives,
 * by era, the tool's task support, the tasks extension and the task window;
 * a cancel is delivered to the call and reaches the job its request leads
 * to (or is kept until that job exists), and nothing else.
 */
import { describe, expect, it } from 'vitest';
import { CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import { isCancelledCall, ToolCalls } from '../../dist/src/server/tool-calls.js';
import { InputWaits, INPUT_WAIT_SESSION } from '../../dist/src/asks/input-waits.js';
import { newWireStats } from '../../dist/src/server/guard.js';
import type { CallServer } from '../../dist/src/server/call-lifecycle.js';
import type { ToolDefinition } from '../../dist/src/stages/tool.js';
import { ScriptedBackend, settled } from './scripted-backend.js';

const SESSION = 'conn';

function tool(name: string, extra: Partial<ToolDefinition> = {}): ToolDefinition {
  return { name, description: name, ...extra } as ToolDefinition;
}

function table(taskAfterMs = 1000): { calls: ToolCalls; backend: ScriptedBackend } {
  const backend = new ScriptedBackend();
  backend.tools.set('plain', tool('plain'));
  backend.tools.set('optional', tool('optional', { execution: { taskSupport: 'optional' } }));
  backend.tools.set('required', tool('required', { execution: { taskSupport: 'required' } }));
  backend.tools.set('asks', tool('asks', { usesClient: true }));
  const calls = new ToolCalls(backend, SESSION, newWireStats(), { inputWaits: new InputWaits(backend) });
  calls.serveWith({ tasks: { taskAfterMs }, sdk: {} } as unknown as CallServer);
  return { calls, backend };
}

/** 2026 params: the envelope in `_meta`, with the tasks extension when `tasks`. */
const modern = (name: string, tasks = false) => ({
  name,
  arguments: {},
  _meta: {
    [PROTOCOL_VERSION_META_KEY]: '2026-07-28',
    [CLIENT_CAPABILITIES_META_KEY]: tasks ? { extensions: { 'io.modelcontextprotocol/tasks': {} } } : {},
  },
});

describe("a connection's calls: the kind is decided once, at admission", () => {
  const cases: [string, unknown, number | undefined, string, string | undefined][] = [
    // description, params, task window, kind, where its job is reserved
    ['2025 plain', { name: 'plain' }, undefined, 'plain', SESSION],
    ['2025 task-augmented', { name: 'optional', task: {} }, undefined, 'task', undefined],
    [
      '2025 call of a task-only tool without task (refused by its handler)',
      { name: 'required' },
      undefined,
      'plain',
      SESSION,
    ],
    ['2025 unknown tool (answered by its outcome)', { name: 'nope' }, undefined, 'plain', SESSION],
    ['2026 plain', modern('plain'), undefined, 'plain', SESSION],
    ['2026 plain, the extension declared, a tool without tasks', modern('plain', true), undefined, 'plain', SESSION],
    ['2026 required, the extension declared', modern('required', true), undefined, 'task', undefined],
    ['2026 optional, the extension declared, no window', modern('optional', true), 0, 'task', undefined],
    ['2026 optional, the extension declared, a window', modern('optional', true), 1000, 'windowed', undefined],
    ['2026 optional without the extension', modern('optional'), undefined, 'plain', SESSION],
    ['2026 a tool that asks the client', modern('asks'), undefined, 'rounds', INPUT_WAIT_SESSION],
    ['2026 a 2025 task param is a hint, ignored', { ...modern('plain'), task: {} }, undefined, 'plain', SESSION],
  ];
  for (const [what, params, window, kind, reservedIn] of cases)
    it(`${what}: ${kind}`, () => {
      const { calls, backend } = table(window);
      expect(calls.admit(1, 'tools/call', params)).toEqual({ kind: 'forward' });
      expect(calls.kindOf(1)).toBe(kind);
      expect(backend.calls.map((c) => c.session)).toEqual(reservedIn === undefined ? [] : [reservedIn]);
      expect(calls.callsInFlight()).toBe(reservedIn === undefined ? 0 : 1);
    });

  it('before a server is connected (stdio makes it on the first message), the runner given with the options decides', () => {
    const backend = new ScriptedBackend();
    backend.tools.set('optional', tool('optional', { execution: { taskSupport: 'optional' } }));
    const tasks = { taskAfterMs: 0 } as CallServer['tasks'];
    const calls = new ToolCalls(backend, SESSION, newWireStats(), { inputWaits: new InputWaits(backend), tasks });
    calls.admit(1, 'tools/call', modern('optional', true));
    expect(calls.kindOf(1)).toBe('task');
  });

  it('any other request is in flight, not pooled', () => {
    const { calls, backend } = table();
    expect(calls.admit('l', 'tools/list', {})).toEqual({ kind: 'forward' });
    expect([calls.kindOf('l'), calls.isInFlight('l'), calls.callsInFlight(), backend.calls.length]).toEqual([
      'unpooled',
      true,
      0,
      0,
    ]);
  });

  it('a second request with an id in flight is a duplicate; bad params are refused at the door', () => {
    const { calls } = table();
    calls.admit(1, 'tools/call', { name: 'plain' });
    expect(calls.admit(1, 'tools/list', {}).kind).toBe('duplicate');
    expect(calls.admit(2, 'tools/call', { name: 3 })).toMatchObject({ kind: 'refuse', code: -32602 });
    expect(calls.isInFlight(2)).toBe(false);
  });
});

describe("a connection's calls: a cancel goes to the call", () => {
  it('a plain call: its reservation, under the request id', async () => {
    const { calls, backend } = table();
    calls.admit(1, 'tools/call', { name: 'plain' });
    calls.cancel(1, 'stop', 'notification');
    await Promise.resolve();
    expect(backend.cancels).toEqual([{ session: SESSION, id: 1, reason: 'stop', result: 'cancelled-queued' }]);
    expect(calls.leaving(1)).toBe(false); // its answer is dropped
  });

  it('a call by rounds: its job under the input waits, not the request id', async () => {
    const { calls, backend } = table();
    calls.admit(1, 'tools/call', modern('asks'));
    calls.cancel(1, 'stop', 'notification');
    await Promise.resolve();
    expect(backend.cancels).toMatchObject([{ session: INPUT_WAIT_SESSION, result: 'cancelled-queued' }]);
  });

  it('a windowed call: kept until its job exists (nothing asked of the backend yet)', () => {
    const { calls, backend } = table();
    calls.admit(1, 'tools/call', modern('optional', true));
    calls.cancel(1, 'stop', 'notification');
    expect(backend.cancels).toEqual([]);
    expect(calls.leaving(1)).toBe(true); // answered before it began: nothing of it ran
  });

  it('a request that leads to no job (a task, one not pooled, one unknown): asked under its own key, unknown', async () => {
    const { calls, backend } = table();
    calls.admit(1, 'tools/call', { name: 'optional', task: {} });
    calls.admit(2, 'tools/list', {});
    for (const id of [1, 2, 3]) calls.cancel(id, undefined, 'notification');
    await Promise.resolve();
    expect(backend.cancels.map((c) => [c.session, c.id, c.result])).toEqual([
      [SESSION, 1, 'unknown'],
      [SESSION, 2, 'unknown'],
      [SESSION, 3, 'unknown'],
    ]);
  });

  it('an answer before the handler ran releases the reservation; the id is free again', () => {
    const { calls, backend } = table();
    calls.admit(1, 'tools/call', { name: 'plain' });
    expect(calls.leaving(1)).toBe(true);
    expect([calls.isInFlight(1), backend.stats().inFlight]).toEqual([false, 0]);
    expect(calls.admit(1, 'tools/call', { name: 'plain' })).toEqual({ kind: 'forward' });
  });
});

describe("a connection's calls: a cancelled call ends without a word to the SDK", () => {
  const ctxOf = (id: number) => ({ mcpReq: { id, signal: new AbortController().signal } }) as never;
  const request = { method: 'tools/call', params: { name: 'plain' } } as never;

  function withHooks() {
    const backend = new ScriptedBackend();
    backend.tools.set('plain', tool('plain'));
    const wire = newWireStats();
    const hooked: unknown[] = [];
    const calls = new ToolCalls(backend, SESSION, wire, {
      inputWaits: new InputWaits(backend),
      hooks: { cancelled: (id) => hooked.push(id) },
    });
    return { calls, wire, hooked };
  }

  it("its handler rejects on purpose; the SDK's error for it is dropped uncounted, the hook runs once", async () => {
    const { calls, wire, hooked } = withHooks();
    calls.admit(1, 'tools/call', { name: 'plain' });
    const answer = calls.handle(request, ctxOf(1));
    calls.cancel(1, 'stop', 'notification');
    const rejection = await answer.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isCancelledCall(rejection)).toBe(true);
    expect(calls.leaving(1)).toBe(false);
    expect([wire.responsesDropped, hooked]).toEqual([0, [1]]);
    await settled();
    expect([calls.isInFlight(1), hooked]).toEqual([false, [1]]);
  });

  it('with no answer from the SDK, the call is forgotten a macrotask after its handler settled, and the hook runs then', async () => {
    const { calls, hooked } = withHooks();
    calls.admit(1, 'tools/call', { name: 'plain' });
    const answer = calls.handle(request, ctxOf(1)).catch(() => undefined);
    calls.cancel(1, 'stop', 'notification');
    await answer;
    expect([calls.isInFlight(1), hooked]).toEqual([true, []]);
    await settled();
    expect([calls.isInFlight(1), hooked]).toEqual([false, [1]]);
    expect(calls.admit(1, 'tools/call', { name: 'plain' })).toEqual({ kind: 'forward' }); // the id is free again
  });

  it('a response produced for a call cancelled before its handler ran is dropped and counted', () => {
    const { calls, wire } = withHooks();
    calls.admit(1, 'tools/call', { name: 'plain' });
    calls.cancel(1, 'stop', 'notification');
    expect(calls.leaving(1)).toBe(false);
    expect(wire.responsesDropped).toBe(1);
  });
});
