/**
 * Imported first by the command line's entry, before anything that builds a
 * zod schema at load time. `zod/compile` (zod's own entry, no fork) gives
 * every schema built after it a generated fast path for a parse that
 * succeeds, and keeps zod's runtime parser for one that fails, so results
 * and error texts stay zod's. The SDK 2.x line runs zod on every message:
 * type guards in its stdio entry and in `Protocol`, the request and result
 * schemas, the tool's input. Measured with `--trace-gc-nvp` and a raw
 * JSON-RPC client (BENCHMARKS.md, seventh pass on issue 24), it took about
 * 6.4 KB of the 42 KB of garbage a zero-work call makes.
 *
 * The library (`src/index.ts`) leaves this to its host: it is a process-wide
 * setting of zod, which a library must not make for the application.
 */
import 'zod/compile';
