/** The example tools, served with: mcp-cancel-pool serve --tools dist-dev/examples/tools/index.js */
import gzipFile from './gzip-file.js';
import hashFile from './hash-file.js';
import typecheck from './typecheck.js';
import wasmPrimes from './wasm-primes.js';

export default [wasmPrimes, typecheck, hashFile, gzipFile];
