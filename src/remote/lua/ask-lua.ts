/**
 * The Lua of a stage's asks of the client across hosts (host-asks.ts,
 * front-asks.ts). Both directions are kept in the job's hash as well as
 * published, so a message missed while a subscriber reconnects is found
 * later: the ask ({@link ASK}: `q:<ask>`, only while the asking host holds
 * the job) by the front end's probe of its running calls (PROBE in job-lua.ts
 * lists the open ones), the reply ({@link REPLY}: `r:<ask>`) by the host's
 * check. The whole hash goes when the front end retires the job.
 */
import { LUA_JOB_STATUS } from './call-states.js';

/**
 * KEYS: job. ARGV: token, front channel prefix, message, named front, ask
 * id. An ask of the client, kept as `q:<ask>` and published to the job's
 * owner in one step, only while the token's holder runs the job. 1 if sent.
 */
export const ASK = `${LUA_JOB_STATUS}
if redis.call('HGET', KEYS[1], 's') ~= RUNNING or redis.call('HGET', KEYS[1], 'k') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'q:' .. ARGV[5], ARGV[3])
redis.call('PUBLISH', ARGV[2] .. (redis.call('HGET', KEYS[1], 'f') or ARGV[4]), ARGV[3])
return 1`;

/**
 * KEYS: job. ARGV as {@link ASK}, the message the withdrawal (`t: 'x'`).
 * The ask is dropped from the hash whatever the state (no front end may
 * find it after this), and the withdrawal is published only while the
 * token's holder runs the job. 1 if published.
 */
export const WITHDRAW = `${LUA_JOB_STATUS}
redis.call('HDEL', KEYS[1], 'q:' .. ARGV[5])
if redis.call('HGET', KEYS[1], 's') ~= RUNNING or redis.call('HGET', KEYS[1], 'k') ~= ARGV[1] then return 0 end
redis.call('PUBLISH', ARGV[2] .. (redis.call('HGET', KEYS[1], 'f') or ARGV[4]), ARGV[3])
return 1`;

/**
 * KEYS: job. ARGV: ask id, front id, reply channel, reply message. Only the
 * front end that owns the job may reply, and only while the job runs: a reply
 * to a cancelled, answered or adopted job goes nowhere. The ask is no longer
 * open (`q:` goes). 1 if it was sent.
 */
export const REPLY = `${LUA_JOB_STATUS}
if redis.call('HGET', KEYS[1], 's') ~= RUNNING or redis.call('HGET', KEYS[1], 'f') ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'r:' .. ARGV[1], ARGV[4])
redis.call('HDEL', KEYS[1], 'q:' .. ARGV[1])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1`;

/**
 * KEYS: a parked call's record (parking.ts). ARGV: job key prefix, the
 * adopting front end, front channel prefix, cancel channel. A 2026 retry reached a front end:
 * whoever deletes the record first takes the call (exactly one adoption; a
 * replayed state finds no record), and the job's ownership moves to the
 * adopting front end in the same step: from then on the host's reports and
 * outcome reach it, and only its replies are taken. The old owner is told
 * (`t: 'm'`) so it lets go without cancelling, and so are the hosts
 * (`<job> > <front>` on the cancel channel: where the end of a stopped job is
 * reported). Returns [found, record data, job id]:
 * 'adopted', 'used' (no record) or 'gone' (the job no longer runs).
 */
export const ADOPT = `${LUA_JOB_STATUS}
local j = redis.call('HGET', KEYS[1], 'j')
if not j then return {'used', '', ''} end
local d = redis.call('HGET', KEYS[1], 'd')
redis.call('DEL', KEYS[1])
local job = ARGV[1] .. j
if redis.call('HGET', job, 's') ~= RUNNING then return {'gone', '', j} end
local old = redis.call('HGET', job, 'f')
if old ~= ARGV[2] then
  redis.call('HSET', job, 'f', ARGV[2])
  redis.call('PUBLISH', ARGV[3] .. old, '{"j":' .. cjson.encode(j) .. ',"t":"m"}')
  redis.call('PUBLISH', ARGV[4], j .. ' > ' .. ARGV[2])
end
return {'adopted', d, j}`;

/**
 * KEYS: job, its task's questions (task-input-lua.ts). ARGV: front liveness
 * prefix, then the host's open ask ids. A task's job outlives its front
 * end, but an ask published to a front end that died before it kept the
 * question in Redis reached nobody: returns those of the asks that no front
 * end can show, once the job's owner is gone (its liveness key expired):
 * neither kept among the task's questions nor answered already (a reply in
 * the job's hash). Empty while the owner lives.
 */
export const STRANDED = `
local f = redis.call('HGET', KEYS[1], 'f')
if not f or redis.call('EXISTS', ARGV[1] .. f) == 1 then return {} end
local kept = {}
for _, v in ipairs(redis.call('HVALS', KEYS[2])) do
  local ok, q = pcall(cjson.decode, v)
  if ok and type(q) == 'table' and type(q.a) == 'string' then kept[q.a] = true end
end
local out = {}
for i = 2, #ARGV do
  if not kept[ARGV[i]] and redis.call('HEXISTS', KEYS[1], 'r:' .. ARGV[i]) == 0 then table.insert(out, ARGV[i]) end
end
return out`;
