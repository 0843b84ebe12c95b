/**
 * A request answered before its body was read (a refusal: too large, bad encoding, no decode slot, auth): its
 * answer says `Connection: close` (whoever writes it: a refusal, the auth gate, the SDK), so Node ends the connection
 * once the answer is written and reads nothing more for a decoder. Node would then destroy the socket as soon as its
 * FIN is out; with the client's unread bytes still arriving, the kernel answers them with a reset, which can destroy
 * the answer before the client reads it (an endless body lost its 413). So the close lingers: FIN after the answer,
 * what the client still sends is discarded undecoded up to {@link LINGER_BYTES}, then no longer read (the kernel's
 * window closes, so the client stops sending and costs nothing more), and at {@link LINGER_MS} the socket is
 * destroyed. Destroying at the byte bound instead reset a 5 MB body's connection before a busy client had read its
 * 413 (`fetch failed`, EPIPE).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** How long, and how many bytes, a closing connection's remaining input is discarded before it is destroyed. */
const LINGER_MS = 1000;
const LINGER_BYTES = 1024 * 1024;

const LINGERS = Symbol('lingers');
type LingeringSocket = Socket & { [LINGERS]?: true };

/** Ends `socket` after what it has to write, discards its input up to the byte bound, then stops reading until it is destroyed. */
function linger(socket: Socket): void {
  if (socket.destroyed) return;
  socket.end();
  const start = socket.bytesRead;
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.on('data', () => socket.bytesRead - start > LINGER_BYTES && socket.pause());
}

/** Arms `Connection: close` on `res` if its headers go out before `req`'s body was read whole (see the module comment). */
export function closeUnreadAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called with `this` bound, below
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
    if (!req.complete && !this.headersSent) this.setHeader('connection', 'close');
    return writeHead.apply(this, args);
  } as ServerResponse['writeHead'];
  const socket = req.socket as LingeringSocket;
  if (socket[LINGERS]) return;
  socket[LINGERS] = true;
  // Node's server ends a `Connection: close` exchange with destroySoon: lingering instead.
  socket.destroySoon = () => linger(socket);
}
