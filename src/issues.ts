/**
 * Validation failures in words, for error messages a person reads: zod's own
 * `message` is a JSON dump of its issues, and `prettifyError` spans lines.
 */

/** The part of a zod issue we print (structural, so the SDK's zod copy fits too). */
export interface ValidationIssue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/** At most this many issues are spelled out; a peer may send thousands. */
const SHOWN = 5;

/** One line, e.g. `ms: expected number, received string; name: expected string, received undefined`. */
export function describeIssues(error: { readonly issues: readonly ValidationIssue[] }): string {
  const parts = error.issues.slice(0, SHOWN).map((issue) => {
    const where = issue.path
      .map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i > 0 ? '.' : ''}${String(key)}`))
      .join('');
    const what = issue.message.replace(/^Invalid input: /, '');
    return where ? `${where}: ${what}` : what;
  });
  const more = error.issues.length - SHOWN;
  return parts.join('; ') + (more > 0 ? ` (and ${more} more)` : '');
}
