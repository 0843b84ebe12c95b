import { McpCancelPoolError } from '../errors.js';

/**
 * A mistake of the person running the command (a missing file, a CommonJS
 * tools module, a non-empty target directory). The command line prints its
 * message as one line and exits non-zero, with no stack trace: the stack
 * would point into our code, not at what to fix.
 */
export class UsageError extends McpCancelPoolError {
  constructor(message: string) {
    super('ERR_USAGE', message);
  }
}
