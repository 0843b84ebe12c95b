/** Span trees for the tracing tests: the same shape from the SDK's in-memory exporter and from OTLP/JSON a receiver parsed. */

/** One span, as the tests look at it. */
export interface SeenSpan {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly kind: number;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly events: readonly { readonly name: string; readonly attributes: Readonly<Record<string, unknown>> }[];
  readonly start: number;
  readonly end: number;
  /** The service that exported it (OTLP only). */
  readonly service?: string;
}

/** The children of `parent` (by span id) among `spans`, in start order. */
export function childrenOf(spans: readonly SeenSpan[], parent: SeenSpan): SeenSpan[] {
  return spans.filter((s) => s.parentSpanId === parent.spanId).sort((a, b) => a.start - b.start);
}

/** The one span named `name` (optionally also matching `where`); throws listing the names seen if there is not exactly one. */
export function one(
  spans: readonly SeenSpan[],
  name: string | RegExp,
  where: (s: SeenSpan) => boolean = () => true,
): SeenSpan {
  const found = spans.filter((s) => (typeof name === 'string' ? s.name === name : name.test(s.name)) && where(s));
  if (found.length !== 1)
    throw new Error(
      `expected one span ${String(name)}, found ${found.length} among: ${spans.map((s) => s.name).join(', ')}`,
    );
  return found[0]!;
}

/** A tree as text (`name [attr=value …]`, indented by depth), for failure messages and the docs' example. */
export function render(spans: readonly SeenSpan[], root: SeenSpan, keys: readonly string[] = [], depth = 0): string {
  const attrs = keys.filter((k) => root.attributes[k] !== undefined).map((k) => `${k}=${String(root.attributes[k])}`);
  const line = `${'  '.repeat(depth)}${root.name}${attrs.length ? ` (${attrs.join(', ')})` : ''} ${(root.end - root.start).toFixed(1)} ms`;
  return [line, ...childrenOf(spans, root).map((c) => render(spans, c, keys, depth + 1))].join('\n');
}
