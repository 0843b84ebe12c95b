/**
 * A port nobody listens on right now, for a program that must be told its port
 * before it binds (redis-server, nginx, a server whose resource URI names it).
 *
 * Why not `listen(0)`: the kernel hands out ports from its ephemeral range, the
 * same range every outgoing connection takes its local port from. Between our
 * release and the program's bind, another test's connection can take the port
 * (seen in CI: EADDRINUSE on 38117). So the port is drawn from below that range,
 * where no connection lands; a bind checks that nobody listens there.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The kernel's ephemeral range's first port (32768 by default on Linux). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 1024 ? low : 32768;
  } catch {
    return 32768;
  }
}

function tryListen(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(undefined));
    s.listen(port, '127.0.0.1', () => {
      const bound = (s.address() as { port: number }).port;
      s.close(() => resolve(bound));
    });
  });
}

export async function freePort(): Promise<number> {
  const high = ephemeralLow() - 1;
  const low = Math.max(1025, high - 12_000);
  for (let i = 0; i < 50 && high > low; i++) {
    const port = await tryListen(low + Math.floor(Math.random() * (high - low + 1)));
    if (port !== undefined) return port;
  }
  const any = await tryListen(0);
  if (any === undefined) throw new Error('no free port on 127.0.0.1');
  return any;
}
