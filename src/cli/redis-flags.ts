/** The `--help` text of the Sentinel flags, shared by `serve` and `worker`. */
import { SENTINEL_PASSWORD_ENV } from '../remote/sentinel-config.js';

/** `--redis-sentinels`. */
export const SENTINELS_HELP = 'reach Redis through these Redis Sentinels (host:port, comma-separated; port 26379 if none): every connection asks them for the primary and follows a failover; --redis (or its file or variable), if given, then supplies only the primary\'s password and database (see README "Many hosts")';
/** `--redis-sentinel-name`. */
export const SENTINEL_NAME_HELP = 'with --redis-sentinels: the master group name the sentinels monitor (default: mymaster)';
/** `--redis-sentinel-password-file`. */
export const SENTINEL_PASSWORD_HELP = `with --redis-sentinels: a file whose first line is the sentinels' own password (their requirepass; or set ${SENTINEL_PASSWORD_ENV})`;
