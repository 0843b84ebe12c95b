/**
 * The CPU burner behind `spin`, in a module of its own with no imports, so
 * the benchmark's baseline workers run the very same loop without loading
 * zod or the stages API.
 */

/** Busy-waits for `ms` milliseconds on this thread. */
export function burn(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    /* spinning is the point */
  }
}
