/**
 * The issuer's signing keys (its JWKS), fetched by us and looked up with jose's local key set. A token naming a key
 * the set does not hold makes it fetch again, at most once per {@link JWKS_COOLDOWN_MS} and one fetch at a time, and a
 * failed fetch (an HTTP error, a timeout, a body that is not a key set) counts against the same cooldown, doubling
 * while fetches keep failing ({@link JWKS_FAILURE_MAX_MS} at most): what unknown `kid`s cost the issuer is bounded
 * whether it answers or not. jose's remote key set records only successful fetches, so against an endpoint answering
 * 500 every such token fetched again (issue 64: 300 requests, 78 fetches).
 *
 * A failure is the issuer's, never the token's: while no key set could be fetched, or when the key a token names is
 * missing and the set cannot be refreshed, the lookup throws {@link IssuerUnavailableError} (503 with Retry-After).
 */
import { createLocalJWKSet, errors as joseErrors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { IssuerUnavailableError } from './issuer-errors.js';

/** A missing key may trigger another JWKS fetch this long after the last attempt. */
export const JWKS_COOLDOWN_MS = 5_000;
/** The cooldown after failed fetches doubles up to this. */
export const JWKS_FAILURE_MAX_MS = 60_000;
/** Keys are fetched again at least this often, so a key the issuer removed stops verifying within it. */
export const JWKS_MAX_AGE_MS = 10 * 60_000;

type Lookup = ReturnType<typeof createLocalJWKSet>;

/** See the module comment. */
export class IssuerKeySet {
  #local: Lookup | undefined;
  #set: JSONWebKeySet | undefined;
  #fetchedAt = 0;
  #attemptAt = Number.NEGATIVE_INFINITY;
  #cooldown = JWKS_COOLDOWN_MS;
  #failure: string | undefined;
  #inFlight: Promise<void> | undefined;
  /** Fetches made so far (successful or not). */
  fetches = 0;

  constructor(
    readonly url: URL,
    private readonly timeoutMs: number,
  ) {}

  /** Fetches the set now (one fetch at a time); rejects with why it failed. */
  reload(): Promise<void> {
    this.#inFlight ??= this.#fetch().finally(() => (this.#inFlight = undefined));
    return this.#inFlight;
  }

  /** The key set last fetched, if any. */
  jwks(): JSONWebKeySet | undefined {
    return this.#set;
  }

  /** The key lookup for jose's `jwtVerify`. */
  readonly getKey: JWTVerifyGetKey = async (header, token) => {
    if (this.#local && Date.now() - this.#fetchedAt > JWKS_MAX_AGE_MS) await this.#refresh();
    if (!this.#local) {
      await this.#refresh();
      if (!this.#local) throw new IssuerUnavailableError(this.#unavailable());
    }
    try {
      return await this.#local(header, token);
    } catch (error) {
      if (!(error instanceof joseErrors.JWKSNoMatchingKey)) throw error;
      // A key the set does not hold: perhaps a rotated one. Fetched again only past the cooldown.
      const before = this.#local;
      await this.#refresh();
      if (this.#local === before) {
        if (this.#failure !== undefined) throw new IssuerUnavailableError(this.#unavailable());
        throw error;
      }
      return this.#local(header, token);
    }
  };

  /** Refetches if the cooldown since the last attempt has passed (or joins the fetch in flight); never throws. */
  async #refresh(): Promise<void> {
    if (!this.#inFlight && Date.now() - this.#attemptAt < this.#cooldown) return;
    await this.reload().catch(() => undefined);
  }

  #unavailable(): string {
    return `the issuer's keys cannot be fetched (${this.#failure ?? 'not fetched yet'})`;
  }

  async #fetch(): Promise<void> {
    this.#attemptAt = Date.now();
    this.fetches++;
    try {
      const response = await fetch(this.url, {
        headers: { accept: 'application/json, application/jwk-set+json' },
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect: 'error',
      });
      if (!response.ok) {
        await response.body?.cancel();
        throw new Error(`HTTP ${response.status}`);
      }
      const text = await response.text();
      let set: JSONWebKeySet;
      try {
        set = JSON.parse(text) as JSONWebKeySet;
        this.#local = createLocalJWKSet(set);
        this.#set = set;
      } catch {
        throw new Error('not a JSON Web Key Set');
      }
      this.#fetchedAt = Date.now();
      this.#failure = undefined;
      this.#cooldown = JWKS_COOLDOWN_MS;
    } catch (error) {
      const e = error as { name?: string; cause?: { code?: string }; message?: string };
      this.#failure = e.name === 'TimeoutError' ? 'timed out' : (e.cause?.code ?? e.message ?? String(error));
      this.#cooldown = Math.min(this.#cooldown * 2, JWKS_FAILURE_MAX_MS);
      throw new Error(this.#failure, { cause: error });
    }
  }
}
