// AssemblyScript source of primes.wasm (built by `npm run build:wasm` into dist-dev/examples/tools/primes.wasm).
// `stopped` is the host's cancellation check: the tool passes ctx.wasmCheckpoint, which returns 1 once the call
// was stopped (one Atomics.load of the job's state word), else 0.

@external('env', 'stopped')
declare function stopped(): i32;

/**
 * Counts the primes below `n` by trial division, asking `stopped()` every `every` candidates and returning -1 as
 * soon as it says 1. With `every` 0 it never asks: the non-cooperative loop only the hard stop can end.
 */
export function countPrimes(n: i32, every: i32): i32 {
  let count = 0;
  for (let i = 2; i < n; i++) {
    if (every > 0 && i % every == 0 && stopped() != 0) return -1;
    let prime = true;
    for (let d = 2; d * d <= i; d++) {
      if (i % d == 0) {
        prime = false;
        break;
      }
    }
    if (prime) count++;
  }
  return count;
}
