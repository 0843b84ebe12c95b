/**
 * One warn line per refused token, so an operator can see why a client is turned away (issue 64: a mainstream
 * issuer's `typ: JWT` tokens were refused and the log said nothing). The line names the reason and, marked unverified
 * (they come from a token that did not verify), the token's `iss`, `aud`, `typ`, `kid` and `client_id`, each escaped
 * and capped; never the token. At most {@link REFUSAL_LINES_PER_MINUTE} lines a minute: a client sending bad tokens
 * in a loop cannot fill the log, and the next line written says how many were left out.
 */
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { escapeForLog, type LogFields } from '../../log/logger.js';

/** Refused-token lines written per minute at most. */
export const REFUSAL_LINES_PER_MINUTE = 10;
const CLAIM_CAP = 128;

/** What a token says about itself, unverified, for the log (empty for an opaque token). */
export function unverifiedClaims(token: string): Record<string, string | undefined> {
  const text = (v: unknown) =>
    typeof v === 'string'
      ? escapeForLog(v, CLAIM_CAP)
      : Array.isArray(v)
        ? escapeForLog(v.filter((x) => typeof x === 'string').join(','), CLAIM_CAP)
        : undefined;
  let header: Record<string, unknown> = {};
  let payload: Record<string, unknown> = {};
  try {
    header = decodeProtectedHeader(token);
    payload = decodeJwt(token);
  } catch {
    // Not a JWT (or not all of one): what could be read is logged.
  }
  return {
    unverified_iss: text(payload.iss),
    unverified_aud: text(payload.aud),
    unverified_typ: text(header.typ),
    unverified_kid: text(header.kid),
    unverified_client_id: text(payload.client_id ?? payload.azp),
  };
}

/** Writes the refused-token lines, rate-limited (see the module comment). */
export class RefusalLog {
  #windowStart = Number.NEGATIVE_INFINITY;
  #written = 0;
  #suppressed = 0;

  constructor(
    private readonly write: (message: string, fields: LogFields) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** Notes that `token` was refused for `reason`. */
  refused(reason: string, token: string): void {
    const t = this.now();
    if (t - this.#windowStart >= 60_000) {
      this.#windowStart = t;
      this.#written = 0;
    }
    if (this.#written >= REFUSAL_LINES_PER_MINUTE) {
      this.#suppressed++;
      return;
    }
    this.#written++;
    const suppressed = this.#suppressed;
    this.#suppressed = 0;
    this.write(`authorization: refused a token: ${escapeForLog(reason)}`, {
      ...unverifiedClaims(token),
      ...(suppressed > 0 && { refusals_not_logged: suppressed }),
    });
  }
}
