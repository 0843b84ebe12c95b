/**
 * The authorization server's metadata, found as a client finds it (RFC 8414,
 * then OpenID Connect Discovery), and its signing keys (the JWKS, ./key-set.ts:
 * a token naming a key it does not hold makes it fetch the set again, at most
 * once per cooldown, failed fetches included, so a rotated key is picked up and
 * a removed one stops verifying).
 *
 * An issuer that cannot be reached is not fatal: the server starts, readiness
 * says why it is not ready, and discovery is retried with a capped backoff
 * (the rule an unreachable Redis follows too).
 */
import { IssuerKeySet } from './key-set.js';
import { IssuerUnavailableError } from './issuer-errors.js';

export { IssuerUnavailableError } from './issuer-errors.js';
export { JWKS_COOLDOWN_MS, JWKS_MAX_AGE_MS } from './key-set.js';

/** The fields of RFC 8414 / OpenID metadata this server reads. */
export interface IssuerMetadata {
  readonly issuer: string;
  readonly jwks_uri?: string;
  readonly introspection_endpoint?: string;
  readonly scopes_supported?: readonly string[];
}

/** How long one metadata or JWKS request may take. */
const FETCH_TIMEOUT_MS = 5_000;
/** Retry delays after a failed discovery: doubling from the first, capped. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 30_000;

/** The URLs a client tries for `issuer`'s metadata, in the MCP spec's order. */
export function metadataUrls(issuer: string): URL[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/$/, '');
  const at = (p: string) => new URL(p, url.origin);
  if (path === '') return [at('/.well-known/oauth-authorization-server'), at('/.well-known/openid-configuration')];
  return [
    at(`/.well-known/oauth-authorization-server${path}`),
    at(`/.well-known/openid-configuration${path}`),
    at(`${path}/.well-known/openid-configuration`),
  ];
}

/** Options for {@link IssuerDiscovery}. */
export interface DiscoveryOptions {
  /** Called after a failed attempt whose reason differs from the last one, with one line (no secrets: only URLs and statuses). */
  readonly onFailure?: (why: string) => void;
  /** Called when discovery succeeds after having failed. */
  readonly onRecovered?: () => void;
}

/** The issuer's metadata and keys, kept current; see the module comment. */
export class IssuerDiscovery {
  #metadata: IssuerMetadata | undefined;
  #jwks: IssuerKeySet | undefined;
  #why = 'the authorization server has not been reached yet';
  #timer: NodeJS.Timeout | undefined;
  #delay = RETRY_FIRST_MS;
  #attempt: Promise<void> | undefined;
  #failed = false;
  #closed = false;

  constructor(
    readonly issuer: string,
    private readonly options: DiscoveryOptions = {},
  ) {}

  /** Starts discovery; resolves after the first attempt, whatever its outcome (a failure schedules retries). */
  start(): Promise<void> {
    return this.#try();
  }

  /** Whether tokens can be verified now, and if not, why. */
  readiness(): { ready: true } | { ready: false; why: string } {
    return this.#metadata ? { ready: true } : { ready: false, why: this.#why };
  }

  /** The metadata; throws {@link IssuerUnavailableError} before discovery succeeded. */
  metadata(): IssuerMetadata {
    if (!this.#metadata) throw new IssuerUnavailableError(this.#why);
    return this.#metadata;
  }

  /** The issuer's key set; throws {@link IssuerUnavailableError} before discovery succeeded or without a `jwks_uri`. */
  keys(): IssuerKeySet {
    this.metadata();
    if (!this.#jwks)
      throw new IssuerUnavailableError(`the issuer's metadata names no jwks_uri: JWT access tokens cannot be verified`);
    return this.#jwks;
  }

  /** Stops retrying. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
  }

  #try(): Promise<void> {
    this.#attempt ??= this.#discover().finally(() => (this.#attempt = undefined));
    return this.#attempt;
  }

  async #discover(): Promise<void> {
    try {
      const metadata = await fetchMetadata(this.issuer);
      const jwks =
        metadata.jwks_uri === undefined ? undefined : new IssuerKeySet(new URL(metadata.jwks_uri), FETCH_TIMEOUT_MS);
      // Ready means tokens can be checked: the keys are fetched once now, not on the first request.
      if (jwks)
        await jwks
          .reload()
          .catch((error: unknown) =>
            Promise.reject(new Error(`cannot fetch the issuer's keys from ${metadata.jwks_uri}: ${reason(error)}`)),
          );
      this.#metadata = metadata;
      this.#jwks = jwks;
      if (this.#failed) this.options.onRecovered?.();
      this.#failed = false;
    } catch (error) {
      const why = `authorization server ${this.issuer} not reachable: ${reason(error)}`;
      // Said once per distinct reason: a retry that fails the same way adds nothing to the log.
      if (why !== this.#why || !this.#failed) this.options.onFailure?.(why);
      this.#why = why;
      this.#failed = true;
      if (!this.#closed) {
        this.#timer = setTimeout(() => void this.#try(), this.#delay);
        this.#timer.unref();
        this.#delay = Math.min(this.#delay * 2, RETRY_MAX_MS);
      }
    }
  }
}

/** Tries each metadata URL in turn; the first document whose `issuer` is exactly ours wins (RFC 8414 section 3.3). */
async function fetchMetadata(issuer: string): Promise<IssuerMetadata> {
  const problems: string[] = [];
  for (const url of metadataUrls(issuer)) {
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
        redirect: 'error',
      });
    } catch (error) {
      problems.push(`${url.href}: ${reason(error)}`);
      continue;
    }
    if (!response.ok) {
      await response.body?.cancel();
      problems.push(`${url.href}: HTTP ${response.status}`);
      continue;
    }
    const doc = (await response.json().catch(() => undefined)) as Partial<IssuerMetadata> | undefined;
    if (typeof doc?.issuer !== 'string') {
      problems.push(`${url.href}: not a metadata document`);
      continue;
    }
    // A document for another issuer would let that issuer's keys verify our tokens.
    if (doc.issuer !== issuer)
      throw new Error(
        `${url.href} names the issuer ${JSON.stringify(doc.issuer)}, not ${JSON.stringify(issuer)} (--auth-issuer must be exactly the issuer's identifier)`,
      );
    return doc as IssuerMetadata;
  }
  throw new Error(problems.join('; '));
}

/** One line about a fetch failure: the cause's code or message, never a stack. */
function reason(error: unknown): string {
  const e = error as { cause?: { code?: string; message?: string }; message?: string; name?: string };
  if (e?.name === 'TimeoutError') return 'timed out';
  return e?.cause?.code ?? e?.cause?.message ?? e?.message?.split('\n')[0] ?? String(error);
}
