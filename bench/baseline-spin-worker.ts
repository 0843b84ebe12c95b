/**
 * Baseline worker for bench/executor-cancel.ts: a plain Piscina task file with
 * no cancellation protocol at all. `spin` burns CPU until Piscina's own abort
 * terminates the thread; `stamp` returns the wall-clock time it started
 * running, in the same clock the main thread reads
 * (performance.timeOrigin + performance.now()).
 */
export type BaselineTask = { readonly op: 'spin'; readonly ms: number } | { readonly op: 'stamp' };

export default function run(task: BaselineTask): number {
  const at = performance.timeOrigin + performance.now();
  if (task.op === 'stamp') return at;
  const end = performance.now() + task.ms;
  while (performance.now() < end) {
    /* spinning is the point; only termination stops it */
  }
  return at;
}
