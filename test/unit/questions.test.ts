/**
 * The core of asking the client on its own: a kept question is answered once or rejected when its job stops,
 * keys are never reused, and the capability rule.
 */
import { describe, expect, it } from 'vitest';
import { abortableAsk, OpenQuestions, undeclared } from '../../dist/src/asks/questions.js';

describe('abortableAsk', () => {
  it('resolves with the answer; a later abort changes nothing', async () => {
    const ac = new AbortController();
    let answer: ((r: Record<string, unknown>) => void) | undefined;
    const asked = abortableAsk(
      ac.signal,
      'not needed',
      (a) => (answer = a),
      () => true,
    );
    answer!({ ok: 1 });
    ac.abort();
    expect(await asked).toEqual({ ok: 1 });
  });

  it('rejects on abort only if the question was still kept; an already aborted signal rejects at once', async () => {
    const ac = new AbortController();
    const asked = abortableAsk(
      ac.signal,
      'stopped',
      () => undefined,
      () => true,
    );
    ac.abort();
    await expect(asked).rejects.toThrow('stopped');
    await expect(
      abortableAsk(
        AbortSignal.abort(),
        'gone',
        () => undefined,
        () => true,
      ),
    ).rejects.toThrow('gone');
    let settled = false;
    const ac2 = new AbortController();
    void abortableAsk(
      ac2.signal,
      'x',
      () => undefined,
      () => false,
    ).finally(() => (settled = true));
    ac2.abort();
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false); // forgotten elsewhere: whoever took it settles it
  });
});

describe('OpenQuestions', () => {
  it('keys by capability, never reused; answers each waiting key once, ignores others', async () => {
    let changes = 0;
    const q = new OpenQuestions(1, () => changes++);
    const ac = new AbortController();
    const k1 = q.newKey('elicitation/create');
    const a1 = q.ask(k1, { method: 'elicitation/create', params: { message: 'a' } }, ac.signal, 'stop');
    const k2 = q.newKey('roots/list');
    const a2 = q.ask(k2, { method: 'roots/list', params: {} }, ac.signal, 'stop');
    expect([k1, k2]).toEqual(['elicitation-1', 'roots-2']);
    expect(q.pending()).toEqual(
      new Map([
        ['elicitation-1', 'elicitation/create'],
        ['roots-2', 'roots/list'],
      ]),
    );
    expect(q.inputRequests()).toEqual({
      'elicitation-1': { method: 'elicitation/create', params: { message: 'a' } },
      'roots-2': { method: 'roots/list', params: {} },
    });
    expect(q.answer({ 'elicitation-1': { action: 'accept' }, other: {} })).toBe(1);
    expect(await a1).toEqual({ action: 'accept' });
    expect(q.list().map((x) => x.key)).toEqual(['roots-2']);
    ac.abort();
    await expect(a2).rejects.toThrow('stop');
    expect(q.size).toBe(0);
    expect(q.newKey('sampling/createMessage')).toBe('sampling-3');
    expect(changes).toBe(4); // two kept, one answered, one dropped
  });

  it('goes on from a given count (a call adopted from another front end)', () => {
    expect(new OpenQuestions(7).newKey('roots/list')).toBe('roots-7');
  });
});

describe('undeclared', () => {
  it('refuses a method whose capability the client did not declare, naming it', () => {
    expect(undeclared('sampling/createMessage', { sampling: {} }, 'x')).toBeUndefined();
    expect(undeclared('sampling/createMessage', { elicitation: {} }, 'this request')?.message).toBe(
      "sampling/createMessage: the client did not declare the 'sampling' capability in this request",
    );
  });
});
