/** (f)'s `blob` tool body on Piscina (`--blob`): `bytes` characters of text, built in the worker, as ours' bench/tools/blob.ts does. */
export default function blob(bytes: number) {
  return { content: [{ type: 'text' as const, text: 'x'.repeat(bytes) }] };
}
