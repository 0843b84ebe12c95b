/**
 * A result must survive both postMessage and JSON serialisation. Checking the
 * shape up front turns a would-be worker crash (DataCloneError while posting)
 * into a clear error for this one job, without copying the data.
 */
export function assertPlainJson(value: unknown, path: string): void {
  // The common case, plain data, builds no strings; only a failure walks again to name the path.
  if (plainJsonProblem(value, 0, false) !== undefined) throw new Error(plainJsonProblem(value, 0, true, path));
}

/** Undefined if `value` is plain JSON data; otherwise what is wrong (with its path when `describe` is set). */
function plainJsonProblem(value: unknown, depth: number, describe: boolean, path = ''): string | undefined {
  if (depth > 64) return `${path} is nested too deeply to send`;
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'undefined':
      return undefined;
    case 'number':
      return Number.isFinite(value) ? undefined : `${path} is ${value}, which JSON cannot carry`;
    case 'object': {
      if (value === null) return undefined;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          const problem = plainJsonProblem(value[i], depth + 1, describe, describe ? `${path}[${i}]` : path);
          if (problem !== undefined) return problem;
        }
        return undefined;
      }
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null) {
        return `${path} is a ${value.constructor?.name ?? 'class instance'}, not plain JSON data; cannot send it back`;
      }
      for (const k in value) {
        const v = (value as Record<string, unknown>)[k];
        if (v === undefined) continue;
        const problem = plainJsonProblem(v, depth + 1, describe, describe ? `${path}.${k}` : path);
        if (problem !== undefined) return problem;
      }
      return undefined;
    }
    default:
      return `${path} is a ${typeof value}, which cannot be sent back`;
  }
}
