/**
 * Rule `http.post-cancel`, 2026-07-28 Streamable HTTP, information: how the server treats a `notifications/cancelled`
 * sent by POST. The revision's only HTTP cancel is the closed response stream, but the SDK 2.x client POSTs the
 * notification behind a wrapping transport (a logging tap, a proxy), so servers meet it. The probe starts the long
 * call on a stream of its own, POSTs the cancel naming it, and watches the call for `--settle-ms`. Either clear
 * treatment passes: refused with a JSON-RPC error (the client is told, the call runs on), or honoured (the call's
 * stream ends with no answer). Accepted and ignored, the client believes it cancelled while the work runs to its end:
 * a warning, since the revision does not define the POST. The probe then closes the call's stream, the real cancel.
 */
import { ERAS } from '../era.js';
import type { Http2026Transport } from '../http-2026.js';
import { sleep } from '../stats.js';
import type { ProbeOptions, Verdict } from '../types.js';
import type { Wire } from '../wire.js';

const RULE = 'http.post-cancel';
const TITLE =
  'a notifications/cancelled sent by POST is refused with an error or closes the call (2026-07-28: undefined)';
/** Of the POST's answer, the evidence quotes at most this much. */
const QUOTE = 160;

/** What the POST's answer says, in a phrase, and whether it is a JSON-RPC error the client can show. */
function describePost(status: number, text: string): { phrase: string; rpcError: boolean } {
  let message: string | undefined;
  let code: unknown;
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body.error?.message === 'string') ({ message, code } = body.error as { message: string; code: unknown });
  } catch {
    // not JSON: quoted as text below
  }
  if (message !== undefined) {
    const quoted = message.length > QUOTE ? `${message.slice(0, QUOTE)}…` : message;
    return { phrase: `HTTP ${status} with JSON-RPC error ${String(code)} "${quoted}"`, rpcError: true };
  }
  const body = text.trim().replace(/\s+/g, ' ').slice(0, QUOTE);
  return { phrase: `HTTP ${status}${body ? ` "${body}"` : ' with no body'}`, rpcError: false };
}

export async function postCancelCase(
  wire: Wire,
  transport: Http2026Transport,
  url: string,
  options: ProbeOptions,
): Promise<Verdict> {
  const { id } = wire.request('tools/call', { name: options.tool, arguments: options.args });
  await sleep(options.cancelAfterMs);
  if (wire.answersFor(id).length > 0) {
    transport.abort(id);
    return {
      rule: RULE,
      title: TITLE,
      outcome: 'skip',
      evidence: `the long call was answered within --cancel-after-ms ${options.cancelAfterMs}: give --args for a longer call`,
    };
  }
  const post = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': ERAS['2026'].version,
      'mcp-method': 'notifications/cancelled',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: id, reason: 'probe: cancelled by POST', _meta: wire.requestMeta() },
    }),
    signal: AbortSignal.timeout(options.timeoutMs),
  }).then(
    async (r) => ({ status: r.status, text: await r.text() }),
    (e: unknown) => ({ status: 0, text: e instanceof Error ? e.message : String(e) }),
  );
  const answer = await wire.answer(id, options.settleMs);
  // False when the call's stream is no longer open: the server closed it (or answered on it).
  const stillOpen = transport.abort(id);
  const { phrase, rpcError } = describePost(post.status, post.text);
  const call = answer
    ? 'error' in answer.msg
      ? 'the call was then answered with an error'
      : 'the call ran on and was answered'
    : stillOpen
      ? `the call ran on (still in flight ${options.settleMs} ms later; the probe then closed its stream)`
      : "the server then closed the call's stream with no answer";
  const refused = post.status >= 400 && post.status < 500 && rpcError;
  const honoured = post.status >= 200 && post.status < 300 && answer === undefined && !stillOpen;
  const verdict = refused ? 'refused' : honoured ? 'honoured' : 'neither refused with an error nor honoured';
  return {
    rule: RULE,
    title: TITLE,
    outcome: refused || honoured ? 'pass' : 'warn',
    evidence: `${verdict}: the POST got ${phrase}; ${call}`,
  };
}
