/**
 * The 2026-07-28 per-request envelope as a handler reads it: the SDK lifts
 * the reserved `_meta` keys into `ctx.mcpReq.envelope`, whose public type
 * hides them. A request without the protocol version key is a 2025 one.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  type LoggingLevel,
  type ServerContext,
} from '@modelcontextprotocol/server';

/** What a 2026 request says about its client, per request. */
export interface RequestEnvelope {
  readonly protocolVersion: string;
  /** The client's extensions, e.g. `io.modelcontextprotocol/tasks`. */
  readonly extensions: Readonly<Record<string, unknown>>;
  /** Absent: the request gets no `notifications/message`. */
  readonly logLevel: LoggingLevel | undefined;
}

/** The envelope of a 2026 request; undefined for a 2025 one. */
export function envelopeOf(ctx: ServerContext): RequestEnvelope | undefined {
  const raw = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const protocolVersion = raw?.[PROTOCOL_VERSION_META_KEY];
  if (typeof protocolVersion !== 'string') return undefined;
  const capabilities = raw?.[CLIENT_CAPABILITIES_META_KEY] as { extensions?: Record<string, unknown> } | undefined;
  return {
    protocolVersion,
    extensions: capabilities?.extensions ?? {},
    logLevel: raw?.[LOG_LEVEL_META_KEY] as LoggingLevel | undefined,
  };
}

/** The envelope-carrying revisions this server serves. */
export const MODERN_VERSIONS: readonly string[] = ['2026-07-28'];

/**
 * The revision a request's envelope claims, when it is one this server does
 * not serve (the request must then get -32022); undefined otherwise. The
 * SDK checks only the message that opens a stdio connection; every request
 * carries its own claim.
 */
export function unsupportedClaim(params: unknown): string | undefined {
  const meta = (params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  const claim = meta?.[PROTOCOL_VERSION_META_KEY];
  if (claim === undefined) return undefined;
  if (typeof claim === 'string' && MODERN_VERSIONS.includes(claim)) return undefined;
  return typeof claim === 'string' ? claim : JSON.stringify(claim);
}
