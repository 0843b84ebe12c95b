/**
 * The second wall around Redis (the first is its ACL): a key shared by the
 * front ends and worker hosts of one cluster. A job's data and every message a
 * host sends a front end carry an HMAC-SHA256 over what they say and whose
 * they are (the job id), so whoever else can write to Redis can neither run a
 * tool on a host nor forge an answer, a report or a stop. Replays are bound to
 * their job id, which names one call once.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { RedisConfigError } from '../../errors.js';

/** Fewer bytes than this is a password, not a key. */
const MIN_KEY_BYTES = 32;

/** What is signed: a job's data, a message on a front end's channel, a front end's reply to a host's ask, a parked call's record, a task's question. */
export type SignedKind = 'job' | 'message' | 'reply' | 'park' | 'input';

/** The key that signs the records front ends and hosts exchange through Redis (`--cluster-key-file`): a record that does not verify is refused. */
export class ClusterKey {
  private constructor(private readonly key: Buffer) {}

  /** The key in a file (its bytes, a trailing newline trimmed): at least 32 bytes, e.g. `openssl rand -hex 32`. */
  static fromFile(path: string): ClusterKey {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      throw new RedisConfigError(
        `cannot read the cluster key file ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
      );
    }
    return ClusterKey.from(text.replace(/\r?\n$/, ''), path);
  }

  /** A key given as text (`where` names it in an error, never its value). */
  static from(text: string, where = 'the cluster key'): ClusterKey {
    const key = Buffer.from(text, 'utf8');
    if (key.length < MIN_KEY_BYTES)
      throw new RedisConfigError(
        `${where} holds ${key.length} bytes; a cluster key needs at least ${MIN_KEY_BYTES} (make one with: openssl rand -hex 32 > cluster.key)`,
      );
    return new ClusterKey(key);
  }

  /** The MAC of `body` (plain JSON) as `kind` for job `jobId`. */
  sign(kind: SignedKind, jobId: string, body: unknown): string {
    // JSON.stringify of parsed JSON reproduces the text it was parsed from, so both ends sign the same bytes.
    return createHmac('sha256', this.key)
      .update(`${kind}\n${jobId}\n`)
      .update(JSON.stringify(body))
      .digest('base64url');
  }

  /** A key for another purpose (e.g. signing 2026 requestStates), the same on every holder of this key, and not this key. */
  derive(purpose: string): Buffer {
    return createHmac('sha256', this.key).update(`derive\n${purpose}`).digest();
  }

  /** Whether `mac` is `body`'s, compared in constant time. */
  verify(kind: SignedKind, jobId: string, body: unknown, mac: unknown): boolean {
    if (typeof mac !== 'string') return false;
    const want = Buffer.from(this.sign(kind, jobId, body));
    const got = Buffer.from(mac);
    return got.length === want.length && timingSafeEqual(got, want);
  }
}

/** A signed value: its fields and, with a key, `m`, the MAC over the rest. */
export type Signed<T> = T & { readonly m?: string };

/** `value` with its MAC added (unchanged without a key). */
export function signed<T extends object>(
  key: ClusterKey | undefined,
  kind: SignedKind,
  jobId: string,
  value: T,
): Signed<T> {
  return key ? { ...value, m: key.sign(kind, jobId, value) } : value;
}

/** `value` without its MAC if it verifies (or there is no key); undefined if it does not. */
export function verified<T extends object>(
  key: ClusterKey | undefined,
  kind: SignedKind,
  jobId: string,
  value: Signed<T>,
): T | undefined {
  if (!key) return value;
  const { m, ...rest } = value;
  return key.verify(kind, jobId, rest, m) ? (rest as T) : undefined;
}

/**
 * `text` as a signed `kind` of `id` read back from Redis, without its MAC:
 * undefined if it is not JSON (never a throw: whoever can write Redis wrote
 * it), not an object, or does not verify. Its fields are not checked: the
 * caller checks the shape it expects.
 */
export function parseSigned<T extends object>(
  text: string,
  key: ClusterKey | undefined,
  kind: SignedKind,
  id: string,
): T | undefined {
  const value = jsonObject(text);
  return value && verified(key, kind, id, value as Signed<T>);
}

/**
 * `text` as a JSON object, or undefined if it is not JSON or not an object:
 * whoever can publish on a channel or write Redis chose it, so never a
 * throw (JSON.parse('null') is null: a field read on it would throw).
 */
export function jsonObject(text: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
}
