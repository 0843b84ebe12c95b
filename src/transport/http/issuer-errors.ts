/** The issuer cannot be used now (discovery has not succeeded yet, or its keys cannot be fetched); the request is answered 503. */
export class IssuerUnavailableError extends Error {
  constructor(readonly why: string) {
    super(why);
    this.name = 'IssuerUnavailableError';
  }
}
