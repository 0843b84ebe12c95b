/** What can still be read from a message that failed JSON-RPC validation. */

/**
 * The id of something that looks like a request (an object with a string
 * `method` and a string or number `id`), so that an error for it can carry
 * its id instead of `null`; `undefined` for anything else, whose id cannot be
 * determined (JSON-RPC then answers with `id: null`).
 */
export function requestIdOf(raw: unknown): string | number | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const { id, method } = raw as { id?: unknown; method?: unknown };
  return typeof method === 'string' && (typeof id === 'string' || typeof id === 'number') ? id : undefined;
}
