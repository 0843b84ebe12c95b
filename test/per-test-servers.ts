/** Servers a test file starts freely: each test's servers are killed when it ends, passed or failed. */
import { afterEach } from 'vitest';

/** Returns a `start(args)` that makes a server with `make` and kills it after the current test. Call it at module top level. */
export function perTestServers<T extends { kill(): void }>(make: (args: string[]) => T): (args?: string[]) => T {
  let servers: T[] = [];
  afterEach(() => {
    for (const s of servers) s.kill();
    servers = [];
  });
  return (args = []) => {
    const s = make(args);
    servers.push(s);
    return s;
  };
}
