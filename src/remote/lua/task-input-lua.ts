/**
 * The Lua of a 2026 task's questions to the client across front ends
 * (task-input-store.ts). A task's outstanding questions live in one hash
 * beside its record (`mcp:<queue>:input:<task>`, the record's ttl), each
 * under its `inputRequests` key and holding the worker host's ask id; a
 * sorted set (`mcp:<queue>:inputwait`) holds, per task with questions, when
 * its --input-wait-ms runs out on Redis's clock. Each question leaves the
 * hash exactly once, by one script, whichever front end runs it:
 *
 * ```
 *   ASK (the front end the host asked) ──▶ outstanding ──CLAIM (any front end: tasks/update)──▶ answered (the reply is sent to the host in the same step)
 *     the first one: task input_required,    │
 *     its wait starts                        ├──WITHDRAW (the asking front end: the job stopped asking)──▶ gone
 *                                            ├──EXPIRE (any front end's sweep: the wait ran out)──▶ gone, all of the task's (and, in the same step, the job's CANCEL CAS; if it won, the task settled cancelled)
 *                                            └──TASK_SETTLE (task-lua.ts: the task ended, e.g. tasks/cancel)──▶ gone, all of the task's
 *   the last one gone by CLAIM or WITHDRAW ──▶ task working, its wait cleared
 * ```
 */
import { LUA_JOB_STATUS } from './call-states.js';

/** Lua: Redis's clock in ms. */
const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * KEYS: questions, task, its job's state, waits. ARGV: owner, capability,
 * question (signed JSON), the task's JSON as `input_required`, wait ms, task
 * id. Only for the owner's live task whose job runs: the question gets the
 * next key (`<capability>-<n>`, never reused over the task's life) and the
 * record's ttl; the first outstanding one makes the task `input_required`
 * and starts its wait (its length kept in the record's `i`, for the expiry's
 * message on whichever front end wins it). Returns the key, or '' if the
 * task no longer waits.
 */
export const INPUT_ASK = `${LUA_JOB_STATUS}${NOW}
if redis.call('HGET', KEYS[2], 'w') ~= ARGV[1] then return '' end
if redis.call('HEXISTS', KEYS[2], 'a') == 1 then return '' end
if redis.call('HGET', KEYS[3], 's') ~= RUNNING then return '' end
local key = ARGV[2] .. '-' .. redis.call('HINCRBY', KEYS[2], 'k', 1)
redis.call('HSET', KEYS[1], key, ARGV[3])
local ttl = redis.call('PTTL', KEYS[2])
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
if redis.call('HLEN', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[2], 'j', ARGV[4], 'i', ARGV[5])
  redis.call('ZADD', KEYS[4], now + tonumber(ARGV[5]), ARGV[6])
end
return key`;

/** Lua: the last question gone, the live task works on (KEYS[2] its record, KEYS[4] the waits; ARGV[n] its JSON as working, ARGV[m] its id). */
function lastGone(json: number, id: number, waits = 4): string {
  return `
if redis.call('HLEN', KEYS[1]) == 0 then
  redis.call('ZREM', KEYS[${waits}], ARGV[${id}])
  if redis.call('EXISTS', KEYS[2]) == 1 and redis.call('HEXISTS', KEYS[2], 'a') == 0 then redis.call('HSET', KEYS[2], 'j', ARGV[${json}]) end
end`;
}

/**
 * KEYS: questions, task, job's state, waits. ARGV: owner, key, the question
 * as read, reply channel, signed reply, the host's ask id, the task's JSON
 * as `working`, task id. tasks/update on any front end: the owner's live
 * task's question, if still there as read, is taken (one winner), and the
 * reply goes to the host as REPLY (ask-lua.ts) sends it: kept in the job's
 * hash and published, only while the job runs. Returns 'sent', 'stopped'
 * (taken, but the job no longer runs: nobody waits for it), 'taken' (gone
 * already: answered, withdrawn or expired), 'settled' or 'unknown'.
 */
export const INPUT_CLAIM = `${LUA_JOB_STATUS}
if redis.call('HGET', KEYS[2], 'w') ~= ARGV[1] then return 'unknown' end
if redis.call('HEXISTS', KEYS[2], 'a') == 1 then return 'settled' end
if redis.call('HGET', KEYS[1], ARGV[2]) ~= ARGV[3] then return 'taken' end
redis.call('HDEL', KEYS[1], ARGV[2])
local sent = 'stopped'
if redis.call('HGET', KEYS[3], 's') == RUNNING then
  redis.call('HSET', KEYS[3], 'r:' .. ARGV[6], ARGV[5])
  redis.call('PUBLISH', ARGV[4], ARGV[5])
  sent = 'sent'
end${lastGone(7, 8)}
return sent`;

/**
 * KEYS: questions, task, waits. ARGV: key, the question as written, the
 * task's JSON as `working`, task id. The asking front end's side of a stopped
 * ask (the host withdrew it, or the call stopped there): removed if still
 * there as written. 1 if it was.
 */
export const INPUT_WITHDRAW = `
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])${lastGone(3, 4, 3)}
return 1`;

/** KEYS: waits. ARGV: how many. The tasks whose wait has run out (Redis's clock), oldest first. */
export const INPUT_DUE = `${NOW}
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))`;

/**
 * KEYS: questions, task, waits, its job's state, owner's working set, all
 * working. ARGV: task id, owner, the task's JSON as `cancelled`, its answer
 * JSON, cancel channel, job id. One front end's expiry of a task's wait:
 * whoever removes it from the waits takes it (one winner across front ends,
 * and against CLAIM: a question answered first is not there to expire, one
 * expired first is not there to answer), and its questions go. With
 * questions still outstanding on the owner's live task, the job's state
 * decides as CANCEL (job-lua.ts) does: queued|running → cancelled (a running
 * job's host hears it on the cancel channel), and in the same step the task
 * is settled `cancelled` (TASK_SETTLE's fields), so whichever front end
 * reads it next finds it final. Returns 'won', or '' (nothing to expire, or
 * the job's own end came first: that settles the task).
 */
export const INPUT_EXPIRE = `${LUA_JOB_STATUS}${NOW}
local due = redis.call('ZSCORE', KEYS[3], ARGV[1])
if not due or tonumber(due) > now then return '' end
redis.call('ZREM', KEYS[3], ARGV[1])
local n = redis.call('HLEN', KEYS[1])
redis.call('DEL', KEYS[1])
if n == 0 or redis.call('HGET', KEYS[2], 'w') ~= ARGV[2] or redis.call('HEXISTS', KEYS[2], 'a') == 1 then return '' end
local s = redis.call('HGET', KEYS[4], 's')
if s ~= QUEUED and s ~= RUNNING then return '' end
redis.call('HSET', KEYS[4], 's', CANCELLED)
if s == RUNNING then redis.call('PUBLISH', ARGV[5], ARGV[6]) end
redis.call('HSET', KEYS[2], 'j', ARGV[3], 'a', ARGV[4])
redis.call('ZREM', KEYS[5], ARGV[1])
redis.call('ZREM', KEYS[6], ARGV[1])
return 'won'`;
