/**
 * When the line transport's output leaves: messages made in one turn of the
 * event loop leave together while the peer is owed more answers, and the
 * answer to the only request owed leaves at once. Driven through the public
 * `LineTransport` over real streams; the output stream records each write it
 * is handed (a corked batch arrives as one).
 */
import { PassThrough, Writable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { LineTransport } from '../../dist/src/entries/server.js';

/** A transport whose input is fed by the test and whose output records every write, in order. */
async function wired(): Promise<{ transport: LineTransport; input: PassThrough; writes: string[] }> {
  const input = new PassThrough();
  const writes: string[] = [];
  const output = new Writable({
    writev(chunks, done) {
      writes.push(chunks.map((c) => String(c.chunk)).join(''));
      done();
    },
    write(chunk, _encoding, done) {
      writes.push(String(chunk));
      done();
    },
  });
  const transport = new LineTransport(input, output);
  await transport.start();
  return { transport, input, writes };
}

const request = (id: number): string => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' }) + '\n';
const answer = (id: number): JSONRPCMessage => ({ jsonrpc: '2.0', id, result: {} });

/** Feeds `lines` and waits until the transport has read them all. */
async function feed(t: { transport: LineTransport; input: PassThrough }, lines: string[]): Promise<void> {
  let left = lines.length;
  const read = new Promise<void>((resolve) => (t.transport.onmessage = () => void (--left === 0 && resolve())));
  t.input.write(lines.join(''));
  await read;
}

describe('LineTransport output: batched while answers are owed, at once for the last', () => {
  it('with two requests owed, answers made in one turn leave in one write at its end', async () => {
    const t = await wired();
    await feed(t, [request(1), request(2)]);
    void t.transport.send(answer(1));
    void t.transport.send(answer(2));
    expect(t.writes).toEqual([]); // still this turn
    await nextTurn();
    expect(t.writes).toHaveLength(1);
    expect(
      t.writes[0]!.split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { id: number }).id),
    ).toEqual([1, 2]);
  });

  it('the answer to the only request owed leaves at once, before the turn ends', async () => {
    const t = await wired();
    await feed(t, [request(7)]);
    void t.transport.send(answer(7));
    expect(t.writes.map((w) => (JSON.parse(w) as { id: number }).id)).toEqual([7]);
  });

  it('a request the peer cancelled is no longer owed, so the other answer leaves at once', async () => {
    const t = await wired();
    const cancel =
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2, reason: 'test' } }) +
      '\n';
    await feed(t, [request(1), request(2), cancel]);
    void t.transport.send(answer(1));
    expect(t.writes).toHaveLength(1);
  });

  it('a notification sent while an answer is owed waits for the turn, and leaves with that answer', async () => {
    const t = await wired();
    await feed(t, [request(3)]);
    void t.transport.send({
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken: 't', progress: 1 },
    });
    expect(t.writes).toEqual([]);
    void t.transport.send(answer(3));
    await nextTurn();
    expect(t.writes).toHaveLength(1);
    expect(t.writes[0]!.split('\n').filter(Boolean)).toHaveLength(2);
  });

  it('a request the protocol layer threw on is not owed: the next lone answer still leaves at once', async () => {
    const t = await wired();
    const errors: Error[] = [];
    t.transport.onerror = (e) => void errors.push(e);
    let seen = 0;
    const read = new Promise<void>((resolve) => {
      t.transport.onmessage = (m) => {
        if (++seen === 2) resolve();
        if ('id' in m && m.id === 4) throw new Error('handler blew up');
      };
    });
    t.input.write(request(4) + request(5));
    await read;
    expect(errors.map((e) => e.message)).toEqual(['handler blew up']);
    void t.transport.send(answer(5));
    expect(t.writes.map((w) => (JSON.parse(w) as { id: number }).id)).toEqual([5]);
  });
});
