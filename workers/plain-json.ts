/**
 * A result must survive both postMessage and JSON serialisation. Checking the
 * shape up front turns a would-be worker crash (DataCloneError while posting)
 * into a clear error for this one job, without copying the data.
 */
export function assertPlainJson(value: unknown, path: string, depth = 0): void {
  if (depth > 64) throw new Error(`${path} is nested too deeply to send`);
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new Error(`${path} is ${value}, which JSON cannot carry`);
      return;
    case 'object': {
      if (value === null) return;
      if (Array.isArray(value)) {
        value.forEach((v, i) => assertPlainJson(v, `${path}[${i}]`, depth + 1));
        return;
      }
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null) {
        throw new Error(`${path} is a ${(value as object).constructor?.name ?? 'class instance'}, not plain JSON data; cannot send it back`);
      }
      for (const [k, v] of Object.entries(value)) if (v !== undefined) assertPlainJson(v, `${path}.${k}`, depth + 1);
      return;
    }
    case 'undefined':
      return;
    default:
      throw new Error(`${path} is a ${typeof value}, which cannot be sent back`);
  }
}
