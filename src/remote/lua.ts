/**
 * The per-job state machine in Redis, one Lua script per transition. Redis runs
 * a script atomically, so each script is the cross-host counterpart of the
 * local state word's compare-and-swap: only one transition out of `queued` or
 * `running` can succeed.
 *
 * ```
 *   queued ──take (host)──▶ running ──respond (host)──▶ responding   (the outcome is published; the front end answers)
 *     │                       │ ▲
 *     │                       │ └─retake (another host, after BullMQ's stalled-job recovery; the old token loses)
 *     │                       ├──cancel (front end)──────▶ cancelled (published to the hosts; nothing is ever sent)
 *     │                       ├──orphan (host: front end gone)──▶ cancelled
 *     │                       └──lost (front end: host gone, not retaken in time)──▶ failed (a tool error is sent)
 *     ├──cancel (front end)─────────────────────────────▶ cancelled (never reaches a host)
 *     └──take finds the front end gone──────────────────▶ cancelled
 * ```
 */

/** KEYS: job, front liveness. ARGV: front id, ttl ms. A new job, queued. */
export const CREATE = `
redis.call('HSET', KEYS[1], 's', 'queued', 'f', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

/**
 * KEYS: job, front liveness. ARGV: host id, lock token, cancel channel, job id.
 * Returns 'running' (taken), 'retaken' (taken over from a host whose lock
 * expired; that host is told to stop), 'orphan' (its front end is gone: now
 * cancelled), 'gone' (no state), or the state that stopped it.
 */
export const TAKE = `
local s = redis.call('HGET', KEYS[1], 's')
if not s then return 'gone' end
if s ~= 'queued' and s ~= 'running' then return s end
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('HSET', KEYS[1], 's', 'cancelled')
  return 'orphan'
end
local old = redis.call('HGET', KEYS[1], 'k')
if s == 'running' and old == ARGV[2] then return 'running' end
redis.call('HSET', KEYS[1], 's', 'running', 'h', ARGV[1], 'k', ARGV[2])
if s == 'running' then
  redis.call('PUBLISH', ARGV[3], ARGV[4] .. ' ' .. old)
  return 'retaken'
end
return 'running'`;

/** KEYS: job. ARGV: token, front channel, message. running → responding for the token's holder, and the outcome leaves in the same step. */
export const RESPOND = `
if redis.call('HGET', KEYS[1], 's') ~= 'running' or redis.call('HGET', KEYS[1], 'k') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 's', 'responding', 'o', ARGV[3])
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1`;

/** KEYS: job. ARGV: token, front channel, message. A progress or log report, published only while the token's holder runs the job. */
export const REPORT = `
if redis.call('HGET', KEYS[1], 's') ~= 'running' or redis.call('HGET', KEYS[1], 'k') ~= ARGV[1] then return 0 end
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1`;

/** KEYS: job. ARGV: cancel channel, job id. queued|running → cancelled; returns the state it found ('unknown' if none). */
export const CANCEL = `
local s = redis.call('HGET', KEYS[1], 's')
if not s then return 'unknown' end
if s == 'queued' or s == 'running' then
  redis.call('HSET', KEYS[1], 's', 'cancelled')
  if s == 'running' then redis.call('PUBLISH', ARGV[1], ARGV[2]) end
end
return s`;

/** KEYS: job, front liveness. ARGV: token. A host's check of a running job: cancelled if its front end is gone. */
export const ORPHAN = `
if redis.call('HGET', KEYS[1], 's') ~= 'running' or redis.call('HGET', KEYS[1], 'k') ~= ARGV[1] then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 's', 'cancelled')
return 1`;

/**
 * KEYS: job. ARGV: prefix of host liveness keys. The front end's check of one
 * of its jobs: [state, detail], where detail is the outcome message for
 * 'responding', and for 'running' the host's id, with state 'hostless' when
 * that host's liveness key is gone.
 */
export const PROBE = `
local s = redis.call('HGET', KEYS[1], 's')
if not s then return {'gone', ''} end
if s == 'responding' then return {s, redis.call('HGET', KEYS[1], 'o') or ''} end
if s ~= 'running' then return {s, ''} end
local h = redis.call('HGET', KEYS[1], 'h')
if redis.call('EXISTS', ARGV[1] .. h) == 1 then return {s, h} end
return {'hostless', h}`;

/** KEYS: job, host liveness. Running on a host that is gone → failed (a tool error is owed). 1 if it won. */
export const LOST = `
if redis.call('HGET', KEYS[1], 's') ~= 'running' then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 's', 'failed')
return 1`;
