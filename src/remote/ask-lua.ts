/**
 * The Lua of a stage's asks of the client across hosts (host-asks.ts,
 * front-asks.ts). The ask itself leaves as a report (REPORT in lua.ts: only
 * while the asking host holds the job); the reply goes through
 * {@link REPLY}, which keeps it in the job's hash as well as publishing it,
 * so a host that missed the message (its subscriber reconnecting) finds it at
 * its next check.
 */

/**
 * KEYS: job. ARGV: ask id, front id, reply channel, reply message. Only the
 * front end that owns the job may reply, and only while the job runs: a reply
 * to a cancelled, answered or adopted job goes nowhere. 1 if it was sent.
 */
export const REPLY = `
if redis.call('HGET', KEYS[1], 's') ~= 'running' or redis.call('HGET', KEYS[1], 'f') ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'r:' .. ARGV[1], ARGV[4])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1`;
