/**
 * The 2026-07-28 `requestState` of a parked call: the client carries it to
 * its retry, so it is attacker-controlled input (mrtr.mdx, "Server
 * Requirements"). Signed with HMAC-SHA256 under a key of this process (or
 * one from `--mrtr-key-file`), bound to the caller and the tool, with an
 * expiry; single use is enforced by the wait registry, not here.
 *
 * Wire shape: `m1.` base64url(JSON payload) `.` base64url(HMAC(key, "m1." + payload)).
 * Signed, not encrypted: the payload holds a random wait id, the tool name and
 * the expiry, nothing secret. Verified synchronously, so the guard can decide
 * at the door, before the SDK sees the retry.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';

const PREFIX = 'm1.';
/** Shortest accepted key, as for HMAC-SHA256 keys generally. */
export const MIN_KEY_BYTES = 32;

/** What a state says, once its signature held. */
export interface StatePayload {
  /** The wait it resumes (random, one per park). */
  readonly wait: string;
  /** The tool of the call. */
  readonly tool: string;
  /** Epoch ms after which the state is refused. */
  readonly expiresAt: number;
  /**
   * Where its call is parked: this process (a random id of it) or, when the
   * parking is shared, the cluster's scope. A state that verifies under the
   * key but names another issuer was issued by another process with the same
   * key: its call is not here, and the refusal says so (not "used").
   */
  readonly issuer: string;
}

/** Why a state was refused; `code` is stable, `message` goes on the wire. */
export interface StateRefusal {
  readonly code: 'forged' | 'expired' | 'wrong_tool' | 'foreign';
  readonly message: string;
  /** For an expired state: the wait it named (its call is still to be cancelled if its timer has not run yet). */
  readonly wait?: string;
}

/** Reads a key file (raw bytes; surrounding whitespace of a text key is ignored). Throws if it is shorter than {@link MIN_KEY_BYTES}. */
export function readKeyFile(path: string): Buffer {
  const raw = readFileSync(path);
  const text = raw.toString('utf8');
  const key = /^[\x20-\x7e\s]*$/.test(text) ? Buffer.from(text.trim(), 'utf8') : raw;
  if (key.length < MIN_KEY_BYTES)
    throw new RangeError(
      `--mrtr-key-file ${path}: the key must be at least ${MIN_KEY_BYTES} bytes (got ${key.length})`,
    );
  return key;
}

export class RequestStateSigner {
  private readonly key: Buffer;

  /** `key` defaults to 32 random bytes: states then verify only in this process. */
  constructor(key: Buffer = randomBytes(MIN_KEY_BYTES)) {
    if (key.length < MIN_KEY_BYTES) throw new RangeError(`requestState key must be at least ${MIN_KEY_BYTES} bytes`);
    this.key = Buffer.from(key);
  }

  /** The state for `payload`, bound to `caller` (who alone may present it). */
  sign(payload: StatePayload, caller: string): string {
    const body = Buffer.from(
      JSON.stringify({ w: payload.wait, t: payload.tool, x: payload.expiresAt, i: payload.issuer }),
    ).toString('base64url');
    return `${PREFIX}${body}.${this.mac(body, caller).toString('base64url')}`;
  }

  /** The payload of a state presented by `caller` for `tool` at `now`, or why it is refused. */
  open(state: string, caller: string, tool: string, now = Date.now()): StatePayload | StateRefusal {
    const forged: StateRefusal = {
      code: 'forged',
      message: 'requestState failed verification (not issued by this server to this caller, or altered)',
    };
    const dot = state.lastIndexOf('.');
    if (!state.startsWith(PREFIX) || dot <= PREFIX.length) return forged;
    const body = state.slice(PREFIX.length, dot);
    const given = Buffer.from(state.slice(dot + 1), 'base64url');
    // The caller is inside the MAC: a state presented by anyone else fails as a forgery would, and is told so.
    if (!this.matches(body, caller, given)) return forged;
    let parsed: { w?: unknown; t?: unknown; x?: unknown; i?: unknown };
    try {
      parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as typeof parsed;
    } catch {
      return forged;
    }
    if (
      typeof parsed.w !== 'string' ||
      typeof parsed.t !== 'string' ||
      typeof parsed.x !== 'number' ||
      typeof parsed.i !== 'string'
    )
      return forged;
    if (parsed.t !== tool)
      return { code: 'wrong_tool', message: `requestState was issued for tool '${parsed.t}', not '${tool}'` };
    if (now > parsed.x)
      return {
        code: 'expired',
        wait: parsed.w,
        message: `requestState expired ${now - parsed.x} ms ago: the call waited --input-wait-ms for this retry, then was cancelled`,
      };
    return { wait: parsed.w, tool: parsed.t, expiresAt: parsed.x, issuer: parsed.i };
  }

  private mac(body: string, caller: string): Buffer {
    // Length-prefixed caller: no (caller, body) pair can be re-split into another.
    return createHmac('sha256', this.key).update(`${PREFIX}${caller.length}:${caller}:${body}`).digest();
  }

  private matches(body: string, caller: string, given: Buffer): boolean {
    const expected = this.mac(body, caller);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}

/** True for a refusal rather than a payload. */
export function isRefusal(value: StatePayload | StateRefusal): value is StateRefusal {
  return 'code' in value;
}
