/** An abort reason as the text a cancellation carries. */
export function reasonText(reason: unknown): string | undefined {
  if (reason === undefined) return undefined;
  if (reason instanceof Error) return reason.message;
  return typeof reason === 'string' ? reason : String(reason);
}
