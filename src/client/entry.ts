/**
 * The values of `mcp-cancel-pool/client`, loaded by src/client/index.ts once its optional peer
 * (@modelcontextprotocol/client) is known to be installed; index.ts re-exports them with the entry's types.
 */
export { CancelAwareClient } from './client.js';
export { ClientGuard, DEFAULT_CANCELLED_TTL_MS } from './guard.js';
