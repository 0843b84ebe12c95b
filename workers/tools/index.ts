/** The built-in tools, loaded unless `builtins: false`. */
import { spin } from './spin.js';

export default [spin];
