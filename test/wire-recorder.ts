/** The one wire recorder of the tests: every message a client transport received and sent, in order. */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export interface WireRecord {
  /** Everything the server sent, in arrival order. */
  readonly received: JSONRPCMessage[];
  /** Everything the client sent, in order. */
  readonly sent: JSONRPCMessage[];
}

/** Taps a connected transport (call after `client.connect`, which sets `onmessage`). */
export function recordWire(transport: Transport): WireRecord {
  const received: JSONRPCMessage[] = [];
  const sent: JSONRPCMessage[] = [];
  const onmessage = transport.onmessage!;
  transport.onmessage = (m, extra) => {
    received.push(m);
    onmessage(m, extra);
  };
  const send = transport.send.bind(transport);
  transport.send = (m, o) => {
    sent.push(m);
    return send(m, o);
  };
  return { received, sent };
}
