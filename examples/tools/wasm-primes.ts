/**
 * `wasm_primes`: a WebAssembly loop (./assembly/primes.ts, built with
 * AssemblyScript) that imports the call's cancellation check. With
 * `checkEvery` > 0 the loop asks `ctx.wasmCheckpoint` that often and returns
 * early once the call is stopped; with 0 it never asks, and only the hard stop
 * (the worker thread terminated after the grace) ends it, as for JavaScript.
 */
import { readFileSync } from 'node:fs';
import { defineTool, z, type StageContext } from 'mcp-cancel-pool/tools';

/** The part of the WebAssembly JS API used here (the project's lib has no DOM, and @types/node 22 declares none). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (
    module: object,
    imports: Record<string, Record<string, unknown>>,
  ) => { exports: Record<string, unknown> };
}
const { WebAssembly: wasm } = globalThis as unknown as { WebAssembly: WasmApi };

// Compiled once per worker thread; each call gets its own instance, bound to its own check.
const module = new wasm.Module(readFileSync(new URL('./primes.wasm', import.meta.url)));

export default defineTool({
  name: 'wasm_primes',
  description: 'Counts the primes below `below` in WebAssembly, checking for cancellation every `checkEvery` numbers.',
  input: z.object({
    below: z.number().int().min(2).max(2_000_000_000),
    checkEvery: z.number().int().min(0).default(1000).describe('0: never check (only the hard stop ends it)'),
  }),
  cancelWithinMs: 50,
  examples: [{ below: 3_000_000 }],
  stages: [
    function count({ below, checkEvery }: { below: number; checkEvery: number }, ctx: StageContext) {
      const instance = new wasm.Instance(module, { env: { stopped: ctx.wasmCheckpoint } });
      const countPrimes = instance.exports.countPrimes as (n: number, every: number) => number;
      ctx.progress(0, 1, 'counting in WebAssembly');
      const primes = countPrimes(below, checkEvery);
      // -1: the loop saw the stop and returned early; the checkpoint throws, and nothing is answered.
      if (primes < 0) ctx.checkpoint();
      return { below, primes };
    },
  ],
});
