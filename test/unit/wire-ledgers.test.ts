/**
 * The in-flight registry and the outbound ledger on their own: keys by direction, session and id; the sender's
 * rules of the ledger (record, forget on a failed send, the cancel gate, late responses, the TTL, close) and the
 * counts it derives from its entries' states.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/server';
import { InFlightRegistry, type InFlightEntry } from '../../dist/src/wire/registry.js';
import { OutboundLedger, OutboundRequest } from '../../dist/src/wire/outbound-ledger.js';

const entry = (direction: 'inbound' | 'outbound', session: string, id: string | number): InFlightEntry => ({
  direction,
  session,
  id,
  state: 'x',
  stop: () => true,
});

describe('InFlightRegistry', () => {
  it('keys by direction, session and id: 7 and "7", two sessions and two directions are distinct', () => {
    const r = new InFlightRegistry();
    const all = [
      entry('inbound', 'a', 7),
      entry('inbound', 'a', '7'),
      entry('inbound', 'b', 7),
      entry('outbound', 'a', 7),
    ];
    for (const e of all) expect(r.add(e)).toBe(true);
    expect(r.size).toBe(4);
    expect(r.get('inbound', 'a', 7)).toBe(all[0]);
    expect(r.get('inbound', 'a', '7')).toBe(all[1]);
    expect(r.get('outbound', 'b', 7)).toBeUndefined();
    expect(r.inSession('inbound', 'a')).toEqual([all[0], all[1]]);
    expect(r.all()).toHaveLength(4);
  });

  it('refuses a live duplicate key, and remove takes only the entry that holds the key', () => {
    const r = new InFlightRegistry();
    const first = entry('inbound', 's', 1);
    expect(r.add(first)).toBe(true);
    expect(r.add(entry('inbound', 's', 1))).toBe(false);
    r.remove(entry('inbound', 's', 1)); // same key, another entry: nothing happens
    expect(r.size).toBe(1);
    r.remove(first);
    r.remove(first); // twice: still counted once
    expect(r.size).toBe(0);
    expect(r.inSession('inbound', 's')).toEqual([]);
    const again = entry('inbound', 's', 1);
    expect(r.add(again)).toBe(true);
    expect(r.get('inbound', 's', 1)).toBe(again);
  });
});

function ledger(ttlMs = 1000) {
  const registry = new InFlightRegistry();
  const counters = { sent: 0, stale: 0, initialize: 0, late: 0 };
  const toPeer: JSONRPCMessage[] = [];
  const toLocal: JSONRPCMessage[] = [];
  const l = new OutboundLedger({
    registry,
    session: 's',
    ttlMs,
    counters: {
      cancelSent: () => counters.sent++,
      cancelSuppressed: (why) => counters[why]++,
      lateResponse: () => counters.late++,
    },
    toPeer: async (m) => void toPeer.push(m),
    toLocal: (m) => void toLocal.push(m),
    onError: () => undefined,
  });
  return { l, registry, counters, toPeer, toLocal };
}
const request = (id: string | number, method = 'sampling/createMessage', progressToken?: string): JSONRPCRequest => ({
  jsonrpc: '2.0',
  id,
  method,
  params: progressToken === undefined ? {} : { _meta: { progressToken } },
});

describe('OutboundLedger', () => {
  afterEach(() => vi.useRealTimers());

  it('records a request as it leaves, and forgets it when the send fails', async () => {
    const { l, registry } = ledger();
    await l.send(request(1), 'call-1', async () => undefined);
    expect(l.get(1)).toBeInstanceOf(OutboundRequest);
    expect(l.get(1)!.relatedRequestId).toBe('call-1');
    await expect(l.send(request(2), undefined, async () => Promise.reject(new Error('closed')))).rejects.toThrow(
      'closed',
    );
    expect(l.get(2)).toBeUndefined();
    expect(registry.size).toBe(1);
    expect(l.record(request(1))).toBeUndefined(); // a live id is not recorded twice
  });

  it('pending → cancellationRequested once; a second cancel, an unknown id and initialize are held back', () => {
    const { l, counters, toPeer, toLocal } = ledger();
    l.record(request(1));
    l.record(request(2, 'initialize'));
    expect(l.counts()).toEqual({ pending: 2, cancelling: 0 });
    expect(l.sendCancel(1, 'user')).toBe(true);
    expect(l.get(1)!.state).toBe('cancellationRequested');
    expect(l.sendCancel(1)).toBe(false);
    expect(l.sendCancel(99)).toBe(false);
    expect(l.sendCancel(2)).toBe(false);
    expect(counters).toEqual({ sent: 1, stale: 2, initialize: 1, late: 0 });
    expect(toPeer).toEqual([
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'user' } },
    ]);
    expect(toLocal).toHaveLength(1);
    expect(toLocal[0]).toMatchObject({ id: 1, error: { code: -32001 } });
    expect(l.counts()).toEqual({ pending: 1, cancelling: 1 });
  });

  it('the protocol layer’s own cancel passes the same gate (gateCancel), once', () => {
    const { l, counters } = ledger();
    l.record(request('r'));
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'r' } } as JSONRPCMessage;
    expect(l.gateCancel(cancel)).toBe(true);
    expect(l.gateCancel(cancel)).toBe(false);
    expect(l.gateCancel({ jsonrpc: '2.0', method: 'notifications/cancelled', params: {} })).toBe(false);
    expect(counters.sent).toBe(1);
  });

  it('a response is absorbed only for a cancelled request, and either way forgets it', () => {
    const { l, counters } = ledger();
    l.record(request(1));
    l.record(request(2));
    l.sendCancel(2);
    expect(l.absorbResponse(1)).toBe(false);
    expect(l.absorbResponse(2)).toBe(true);
    expect(l.absorbResponse(2)).toBe(false); // forgotten: a second response is not ours to absorb
    expect(counters.late).toBe(1);
    expect(l.entries()).toEqual([]);
  });

  it('progress of a cancelled request is recognised by its token until the entry goes', () => {
    const { l } = ledger();
    l.record(request(1, 'sampling/createMessage', 'tok'));
    expect(l.cancelledProgress('tok')).toBe(false);
    l.sendCancel(1);
    expect(l.cancelledProgress('tok')).toBe(true);
    expect(l.cancelledProgress({})).toBe(false);
    l.forget(l.get(1)!);
    expect(l.cancelledProgress('tok')).toBe(false);
  });

  it('a cancelled entry waits out its TTL for a late response, then is dropped', () => {
    vi.useFakeTimers();
    const { l } = ledger(500);
    l.record(request(1));
    l.sendCancel(1);
    vi.advanceTimersByTime(499);
    expect(l.get(1)).toBeDefined();
    vi.advanceTimersByTime(1);
    expect(l.get(1)).toBeUndefined();
    expect(l.absorbResponse(1)).toBe(false);
  });

  it('close forgets every entry of its session only, and no cancel leaves after it', () => {
    const { l, registry, counters } = ledger();
    registry.add(entry('outbound', 'other', 1));
    l.record(request(1));
    l.close();
    expect(l.entries()).toEqual([]);
    expect(registry.size).toBe(1);
    l.record(request(2));
    expect(l.sendCancel(2)).toBe(false);
    expect(counters.sent).toBe(0);
  });

  it('stop on an entry is the ledger’s cancel', () => {
    const { l } = ledger();
    const e = l.record(request(5))!;
    expect(e.stop('bye')).toBe(true);
    expect(e.stop('bye')).toBe(false);
  });
});
