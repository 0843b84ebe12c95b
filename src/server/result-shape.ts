/**
 * A `tools/call` result whose shape is plainly valid, checked by hand. The
 * SDK checks every result against its era's CallToolResult schema before it
 * is sent; on the 2025 line that schema is a refine, a transform and a pipe,
 * which zod's compiled fast path does not cover: zod was 7–8 % of the main
 * thread's samples at 32 zero-work calls in flight, about 2 points of it
 * this check (BENCHMARKS.md, eleventh pass on issue 24). A result that
 * passes here passes both eras' schemas unchanged, so the SDK's check is
 * skipped for it; anything else still goes through that check.
 */

/**
 * True when `result` is `{ content, structuredContent?, isError? }` and
 * nothing else: `content` an array of `{ type: 'text', text }` blocks with a
 * string `text`, `structuredContent` a plain object, `isError` a boolean.
 * A false here only sends the result to the SDK's schema.
 */
export function plainlyValidResult(result: unknown): boolean {
  if (!isRecord(result)) return false;
  for (const key in result) {
    const value = result[key];
    switch (key) {
      case 'content':
        if (!plainTextBlocks(value)) return false;
        break;
      case 'structuredContent':
        // 2025's schema wants a record (2026 takes any value); undefined is an absent key once serialised.
        if (value !== undefined && !isRecord(value)) return false;
        break;
      case 'isError':
        if (value !== undefined && typeof value !== 'boolean') return false;
        break;
      default:
        return false;
    }
  }
  return 'content' in result;
}

function plainTextBlocks(value: unknown): boolean {
  if (!Array.isArray(value)) return false;
  for (const block of value) {
    if (!isRecord(block) || block.type !== 'text' || typeof block.text !== 'string') return false;
    for (const key in block) if (key !== 'type' && key !== 'text') return false;
  }
  return true;
}

/** A plain object: what structured clone and JSON.parse make, not an array or a class instance. */
function isRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}
