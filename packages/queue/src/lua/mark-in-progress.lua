-- A worker took the invocation. Never moves a terminal (or delivered) request backwards, so a late
-- duplicate delivery of the job (stalled-job recovery) sees what happened and can skip the work.
-- KEYS[1] request hash
-- ARGV[1] percent complete, ARGV[2] now (ms), ARGV[3] ttl seconds
-- Returns the state after the call: 'in-progress', or the terminal state found, or 'missing'.
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return 'missing' end
if state == 'fulfilled' or state == 'errored' or state == 'delivered' then return state end
redis.call('HSET', KEYS[1], 'state', 'in-progress', 'pct', ARGV[1], 'updated', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 'in-progress'
