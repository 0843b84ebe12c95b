/**
 * A request answered before its body was read (a refusal: too large, bad encoding, no decode slot, auth): its
 * connection ends after the answer, without reading the rest. The answer goes out, then a FIN; what the client still
 * sends is discarded undecoded for a short, bounded while (closing at once with unread bytes makes the kernel send a
 * reset, which can destroy the answer before the client reads it), then the socket is destroyed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** How long, and how many bytes, a refused request's remaining body is discarded before its socket is destroyed. */
const LINGER_MS = 1000;
const LINGER_BYTES = 1024 * 1024;

/** Arms the close of `req`'s connection for when `res` is written, if the body was not read whole by then. */
export function closeUnreadAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
  // Said in the answer too (whoever writes it: a refusal, the auth gate, the SDK), so no client reuses the connection.
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called with `this` bound, below
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
    if (!req.complete && !this.headersSent) this.setHeader('connection', 'close');
    return writeHead.apply(this, args);
  } as ServerResponse['writeHead'];
  res.once('finish', () => {
    if (req.complete) return;
    const socket = req.socket;
    socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    let discarded = 0;
    req.on('data', (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > LINGER_BYTES) socket.destroy();
    });
    req.resume();
  });
}
