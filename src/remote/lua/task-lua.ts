/**
 * The task records of a queue in Redis, one Lua script per step, so the
 * limits, the first-settle-wins rule and a cancel's decision each hold across
 * front ends. A record (`mcp:<queue>:task:<id>`, see keys.ts) expires with
 * its task's ttl; its job's state hash names it (`t`), and the job's RESPOND
 * (job-lua.ts) writes the outcome into it (`o`) as the outcome leaves:
 *
 * ```
 *   create ──▶ working ──RESPOND (host) writes o──▶ working + o ──settle (any front end)──▶ terminal (a)
 *                 │                                                     ▲
 *                 ├──settle (the creating front end, or any, from o or from the job's state)──┘
 *                 └──TASK_CANCEL (any front end): the job's CANCEL decides; if it won, settled cancelled in that step
 * ```
 *
 * A 2026 task's questions to the client (`input_required`) live beside the
 * record, with their own scripts (task-input-lua.ts); a settle removes them.
 */
import { LUA_JOB_STATUS } from './call-states.js';

/**
 * KEYS: task, owner's index, owner's working set, all working, sequence.
 * ARGV: owner, tool, front id, task JSON, ttl ms, expiry (ms since the epoch),
 * now, per-owner limit, overall limit, task id.
 * Returns 'ok', or the limit that refused it ('owner' | 'all'), or 'exists'.
 */
export const TASK_CREATE = `
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[7])
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', ARGV[7])
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[8]) then return 'owner' end
if redis.call('ZCARD', KEYS[4]) >= tonumber(ARGV[9]) then return 'all' end
if redis.call('EXISTS', KEYS[1]) == 1 then return 'exists' end
local q = redis.call('INCR', KEYS[5])
redis.call('HSET', KEYS[1], 'w', ARGV[1], 'n', ARGV[2], 'f', ARGV[3], 'q', q, 'j', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('ZADD', KEYS[2], q, ARGV[10])
redis.call('ZADD', KEYS[3], ARGV[6], ARGV[10])
redis.call('ZADD', KEYS[4], ARGV[6], ARGV[10])
for i = 2, 4 do
  if redis.call('PTTL', KEYS[i]) < tonumber(ARGV[5]) then redis.call('PEXPIRE', KEYS[i], ARGV[5]) end
end
return 'ok'`;

/**
 * KEYS: task, owner's working set, all working, its questions, the input
 * waits (task-input-lua.ts). ARGV: owner, terminal task JSON, answer JSON,
 * task id. Only the first settle of the owner's live task wins (1); the task
 * keeps its ttl, and its questions to the client, if any, go with its end.
 */
export const TASK_SETTLE = `
if redis.call('HGET', KEYS[1], 'w') ~= ARGV[1] then return 0 end
if redis.call('HEXISTS', KEYS[1], 'a') == 1 then return 0 end
redis.call('HSET', KEYS[1], 'j', ARGV[2], 'a', ARGV[3])
redis.call('ZREM', KEYS[2], ARGV[4])
redis.call('ZREM', KEYS[3], ARGV[4])
redis.call('DEL', KEYS[4])
redis.call('ZREM', KEYS[5], ARGV[4])
return 1`;

/**
 * KEYS: task. ARGV: owner, task JSON. A live task of the owner moves between
 * `working` and `input_required` (its job asked the client, or got every
 * answer): only while no settle has won, so a terminal status is never undone.
 */
export const TASK_MARK = `
if redis.call('HGET', KEYS[1], 'w') ~= ARGV[1] then return 0 end
if redis.call('HEXISTS', KEYS[1], 'a') == 1 then return 0 end
redis.call('HSET', KEYS[1], 'j', ARGV[2])
return 1`;

/**
 * KEYS: task, its job's state, then TASK_SETTLE's owner's working set, all
 * working, its questions, the input waits. ARGV: owner, cancel channel, job
 * id, the task's JSON as `cancelled`, its answer JSON, task id. tasks/cancel
 * from any front end: the job's state decides as CANCEL does
 * (queued|running → cancelled; a running job's host hears it on the cancel
 * channel), and a cancel that won settles the task in the same step (as
 * TASK_SETTLE), so the front end holding the job, hearing of the stop, finds
 * it settled and cannot put its own words in its statusMessage. Returns
 * [found, detail]: 'unknown' (not the owner's live task), 'settled'
 * (terminal already), or the job state found ('queued' and 'running' mean
 * the cancel won; 'responding' means completion did; 'none' if the job is
 * not in Redis).
 */
export const TASK_CANCEL = `${LUA_JOB_STATUS}
if redis.call('HGET', KEYS[1], 'w') ~= ARGV[1] then return {'unknown', ''} end
if redis.call('HEXISTS', KEYS[1], 'a') == 1 then return {'settled', ''} end
local s = redis.call('HGET', KEYS[2], 's')
if not s then return {'none', ''} end
if s == QUEUED or s == RUNNING then
  redis.call('HSET', KEYS[2], 's', CANCELLED)
  if s == RUNNING then redis.call('PUBLISH', ARGV[2], ARGV[3]) end
  redis.call('HSET', KEYS[1], 'j', ARGV[4], 'a', ARGV[5])
  redis.call('ZREM', KEYS[3], ARGV[6])
  redis.call('ZREM', KEYS[4], ARGV[6])
  redis.call('DEL', KEYS[5])
  redis.call('ZREM', KEYS[6], ARGV[6])
end
return {s, ''}`;

/**
 * KEYS: task, owner's index, owner's working set, all working. ARGV: task id.
 * Removes one record (its owner's session is gone). Returns its task JSON, or false.
 */
export const TASK_DROP = `
local j = redis.call('HGET', KEYS[1], 'j')
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
return j`;

/**
 * KEYS: task. ARGV: lease end (epoch ms), '1' to give the task its lease.
 * The lease end (`l`) only moves later, and only while the task works; a
 * task without a lease is given one only by the front end that holds its job
 * (tasks/leases.ts). 1 if the record holds a lease now.
 */
export const TASK_LEASE = `
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], 'a') == 1 then return 0 end
local l = redis.call('HGET', KEYS[1], 'l')
if not l and ARGV[2] ~= '1' then return 0 end
if not l or tonumber(ARGV[1]) > tonumber(l) then redis.call('HSET', KEYS[1], 'l', ARGV[1]) end
return 1`;
