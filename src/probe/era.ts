/**
 * What differs between the two protocol revisions, for the probe: one table,
 * so every case takes the era as a parameter instead of having a copy per era.
 */
import type { Era } from './types.js';

export interface EraFacts {
  /** The `protocolVersion` string. */
  readonly version: string;
  /**
   * A cheap request every server of the era must answer, used as a marker
   * behind a cancel and to measure responsiveness: `ping` in 2025-11-25;
   * 2026-07-28 removed `ping`, and every server MUST implement `server/discover`.
   */
  readonly marker: string;
  /** Whether "MUST NOT send any further messages" for a cancelled request is a MUST (2026-07-28) or unwritten (2025-11-25: only "SHOULD NOT send a response"). */
  readonly noFurtherMessagesIsMust: boolean;
  /** Whether a closed HTTP response stream is the cancellation (2026: MUST) or "SHOULD NOT be interpreted as" one (2025). */
  readonly closedStreamIsCancel: boolean;
}

export const ERAS: Readonly<Record<Era, EraFacts>> = {
  '2025': { version: '2025-11-25', marker: 'ping', noFurtherMessagesIsMust: false, closedStreamIsCancel: false },
  '2026': {
    version: '2026-07-28',
    marker: 'server/discover',
    noFurtherMessagesIsMust: true,
    closedStreamIsCancel: true,
  },
};

/** The `_meta` keys a 2026-07-28 request carries instead of an `initialize` handshake. */
export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
} as const;

/** The era of a `protocolVersion` string (undefined for one the probe does not speak). */
export function eraOf(version: string | undefined): Era | undefined {
  for (const [era, facts] of Object.entries(ERAS) as [Era, EraFacts][]) if (facts.version === version) return era;
  return undefined;
}
