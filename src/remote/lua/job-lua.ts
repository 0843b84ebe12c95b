/**
 * The per-job state machine in Redis, one Lua script per transition; the
 * states, the transitions and their diagram are declared once in
 * call-states.ts, whose JOB_TRANSITIONS names the script of each.
 *
 * A host re-reads its jobs' states once a second ({@link CHECK}), so a job
 * whose cancel message it missed, or whose state is gone (Redis restarted
 * without persistence), stops within a second and a half.
 */
import { LUA_JOB_STATUS } from './call-states.js';

/**
 * KEYS: job, front liveness. ARGV: front id, ttl ms, and for a task's job the
 * key of its task record (task-lua.ts). A new job, queued. A job whose task
 * record exists outlives its front end: it is never cancelled as an orphan,
 * and its outcome is written into that record as it leaves ({@link RESPOND}),
 * so any front end can settle the task.
 */
export const CREATE = `${LUA_JOB_STATUS}
redis.call('HSET', KEYS[1], 's', QUEUED, 'f', ARGV[1])
if ARGV[3] and ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 't', ARGV[3]) end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

/** Lua: whether the job in KEYS[1] is a stored task's (its task record exists), so its front end's death does not orphan it. */
const TASK_HELD = `
local function taskHeld()
  local t = redis.call('HGET', KEYS[1], 't')
  return t and redis.call('EXISTS', t) == 1
end`;

/** Lua: the front end that owns the job in KEYS[1] now (an MRTR retry may have moved it, ask-lua.ts ADOPT), else `named`. */
const OWNER = `
local function owner(named)
  return redis.call('HGET', KEYS[1], 'f') or named
end`;

/**
 * KEYS: job. ARGV: host id, lock token, cancel channel, job id, front
 * liveness prefix, front channel prefix, the front end the job's data names.
 * Returns 'running' (taken), 'retaken' (taken over from a host whose lock
 * expired; that host is told to stop), 'orphan' (its front end is gone: now
 * cancelled), 'gone' (no state), or the state that stopped it. A take tells
 * the front end that owns the job (`t: 'r'`), so it counts the call as
 * running, not queued.
 */
export const TAKE = `${LUA_JOB_STATUS}${TASK_HELD}${OWNER}
local s = redis.call('HGET', KEYS[1], 's')
if not s then return 'gone' end
if s ~= QUEUED and s ~= RUNNING then return s end
local f = owner(ARGV[7])
if redis.call('EXISTS', ARGV[5] .. f) == 0 and not taskHeld() then
  redis.call('HSET', KEYS[1], 's', CANCELLED)
  return 'orphan'
end
local old = redis.call('HGET', KEYS[1], 'k')
if s == RUNNING and old == ARGV[2] then return RUNNING end
redis.call('HSET', KEYS[1], 's', RUNNING, 'h', ARGV[1], 'k', ARGV[2])
redis.call('PUBLISH', ARGV[6] .. f, '{"j":' .. cjson.encode(ARGV[4]) .. ',"t":"r","h":' .. cjson.encode(ARGV[1]) .. '}')
if s == RUNNING then
  -- The old holder's open asks (ask-lua.ts) are not the new one's: no front end may find them now.
  for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
    if string.sub(field, 1, 2) == 'q:' then redis.call('HDEL', KEYS[1], field) end
  end
  redis.call('PUBLISH', ARGV[3], ARGV[4] .. ' ' .. old)
  return 'retaken'
end
return RUNNING`;

/**
 * KEYS: job. ARGV: token, front channel prefix, message, named front.
 * running → responding for the token's holder, and the outcome leaves in the
 * same step, to the front end that owns the job now; a task's job also
 * leaves it in its task record (`o`), if the record has not expired.
 */
export const RESPOND = `${LUA_JOB_STATUS}${OWNER}
-- responding too: only a writer without the cluster key puts it there under the holder's token (the holder responds
-- once), and its outcome does not verify; the holder's real one replaces it, and the front end that waited gets it.
local s = redis.call('HGET', KEYS[1], 's')
if (s ~= RUNNING and s ~= RESPONDING) or redis.call('HGET', KEYS[1], 'k') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 's', RESPONDING, 'o', ARGV[3])
local t = redis.call('HGET', KEYS[1], 't')
if t and redis.call('EXISTS', t) == 1 then redis.call('HSET', t, 'o', ARGV[3]) end
redis.call('PUBLISH', ARGV[2] .. owner(ARGV[4]), ARGV[3])
return 1`;

/** KEYS: job. ARGV: token, front channel prefix, message, named front. A report (an ask goes by ASK in ask-lua.ts), published to the job's owner only while the token's holder runs the job. */
export const REPORT = `${LUA_JOB_STATUS}${OWNER}
if redis.call('HGET', KEYS[1], 's') ~= RUNNING or redis.call('HGET', KEYS[1], 'k') ~= ARGV[1] then return 0 end
redis.call('PUBLISH', ARGV[2] .. owner(ARGV[4]), ARGV[3])
return 1`;

/**
 * KEYS: job. ARGV: cancel channel, job id. queued|running → cancelled.
 * Returns [the state it found ('unknown' if none), the outcome message if that was 'responding', the host if 'running'].
 */
export const CANCEL = `${LUA_JOB_STATUS}
local s = redis.call('HGET', KEYS[1], 's')
if not s then return {'unknown', ''} end
if s == QUEUED or s == RUNNING then
  redis.call('HSET', KEYS[1], 's', CANCELLED)
  if s == RUNNING then
    redis.call('PUBLISH', ARGV[1], ARGV[2])
    return {s, redis.call('HGET', KEYS[1], 'h') or ''}
  end
end
if s == RESPONDING then
  local rh = redis.call('HGET', KEYS[1], 'h') or ''
  return {s, redis.call('HGET', KEYS[1], 'o') or '', {rh, redis.call('EXISTS', ARGV[1] .. rh)}}
end
return {s, ''}`;

/**
 * KEYS: job. ARGV: cancel channel, job id. The front end is done with a call
 * (answered, cancelled, failed): a job still queued or running is cancelled
 * (a host running it hears so at once), and the state goes. Returns the state found.
 */
export const RETIRE = `${LUA_JOB_STATUS}
local s = redis.call('HGET', KEYS[1], 's')
if not s then return 'unknown' end
if s == QUEUED or s == RUNNING then
  redis.call('HSET', KEYS[1], 's', CANCELLED)
  if s == RUNNING then redis.call('PUBLISH', ARGV[1], ARGV[2]) end
end
redis.call('DEL', KEYS[1])
return s`;

/** KEYS: job. A host refused the job's data (cluster key): queued → refused (the front end fails the call). 1 if it won. */
export const REFUSE = `${LUA_JOB_STATUS}
if redis.call('HGET', KEYS[1], 's') ~= QUEUED then return 0 end
redis.call('HSET', KEYS[1], 's', REFUSED)
return 1`;

/** KEYS: job. The front end found no live host for too long: queued → failed (a tool error is owed). 1 if it won. */
export const NO_HOST = `${LUA_JOB_STATUS}
if redis.call('HGET', KEYS[1], 's') ~= QUEUED then return 0 end
redis.call('HSET', KEYS[1], 's', FAILED)
return 1`;

/**
 * KEYS: job. ARGV: token, front liveness prefix, named front. A host's check
 * of a job it runs: 'running' (still its to run), 'orphan' (the front end
 * that owns it is gone: now cancelled), 'retaken' (another host holds it),
 * 'gone' (no state: Redis lost it), or the state that ended it ('cancelled',
 * 'responding', 'failed').
 */
export const CHECK = `${LUA_JOB_STATUS}${TASK_HELD}${OWNER}
local s = redis.call('HGET', KEYS[1], 's')
if not s then return 'gone' end
if s ~= RUNNING then return s end
if redis.call('HGET', KEYS[1], 'k') ~= ARGV[1] then return 'retaken' end
if redis.call('EXISTS', ARGV[2] .. owner(ARGV[3])) == 1 or taskHeld() then return RUNNING end
redis.call('HSET', KEYS[1], 's', CANCELLED)
return 'orphan'`;

/** KEYS: live-hosts sorted set. ARGV: host id, ttl ms. A host is alive until Redis's clock passes its score. */
export const HOST_BEAT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
return 1`;

/** KEYS: live-hosts sorted set. Drops the hosts whose beat expired; returns how many are alive. */
export const LIVE_HOSTS = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZCARD', KEYS[1])`;

/**
 * KEYS: job, BullMQ's job. ARGV: prefix of host liveness keys. The front
 * end's check of one of its jobs: [state, detail], where detail is the
 * outcome message for 'responding', and for 'running' the host's id, with
 * state 'hostless' when that host's liveness key is gone, and then a third
 * element: the ids of the host's open asks of the client (`q:` without a
 * reply `r:`, ask-lua.ts), so an ask whose message was missed is found in
 * the same round trip (the hash holds a few fields). 'jobless': queued
 * or running, but BullMQ's job is gone, so no host will ever answer it (a
 * failover kept one of the two writes and lost the other; see {@link JOBLESS}).
 */
export const PROBE = `${LUA_JOB_STATUS}
local function open()
  local out = {}
  for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
    local a = string.sub(field, 3)
    if string.sub(field, 1, 2) == 'q:' and redis.call('HEXISTS', KEYS[1], 'r:' .. a) == 0 then table.insert(out, a) end
  end
  return out
end
local s = redis.call('HGET', KEYS[1], 's')
if not s then return {'gone', ''} end
if s == RESPONDING then
  local rh = redis.call('HGET', KEYS[1], 'h') or ''
  return {s, redis.call('HGET', KEYS[1], 'o') or '', {rh, redis.call('EXISTS', ARGV[1] .. rh)}}
end
if (s == QUEUED or s == RUNNING) and redis.call('EXISTS', KEYS[2]) == 0 then return {'jobless', ''} end
if s ~= RUNNING then return {s, ''} end
local h = redis.call('HGET', KEYS[1], 'h')
if redis.call('EXISTS', ARGV[1] .. h) == 1 then return {s, h, open()} end
return {'hostless', h, open()}`;

/** KEYS: job, host liveness. Running on a host that is gone → failed (a tool error is owed). 1 if it won. */
export const LOST = `${LUA_JOB_STATUS}
if redis.call('HGET', KEYS[1], 's') ~= RUNNING then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 's', FAILED)
return 1`;

/**
 * KEYS: job, BullMQ's job. queued|running with BullMQ's job gone → failed (a
 * tool error is owed). Every path that ends a BullMQ job moves the state out
 * of queued|running first, so only a lost write leaves this. 1 if it won.
 */
export const JOBLESS = `${LUA_JOB_STATUS}
local s = redis.call('HGET', KEYS[1], 's')
if s ~= QUEUED and s ~= RUNNING then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 's', FAILED)
return 1`;
