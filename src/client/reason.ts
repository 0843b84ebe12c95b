/** An abort reason as the text a cancellation carries. */
export function reasonText(reason: unknown): string | undefined {
  if (reason === undefined) return undefined;
  if (reason instanceof Error) return reason.message;
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- any other reason is shown as JavaScript shows it
  return typeof reason === 'string' ? reason : String(reason);
}
