/** The built-in tools, loaded unless `builtins: false`. */
import { spin } from './spin.js';
import { hashFile } from './hash-file.js';
import { compress } from './compress.js';
import { renderMandelbrot } from './mandelbrot.js';
import { countPrimes } from './count-primes.js';

export default [spin, hashFile, compress, renderMandelbrot, countPrimes];
