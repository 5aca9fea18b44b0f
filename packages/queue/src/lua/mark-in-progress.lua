-- A worker took the invocation. Never moves a terminal (or delivered) request backwards, so a late
-- duplicate delivery of the job (stalled-job recovery) sees what happened and can skip the work.
-- A job still queued when its record expired was accepted all the same: its record is made again, from the
-- ids the second call gives (the first, the common case, sends none).
-- Registered under two names by its number of keys (lua-scripts.ts): KEYS[1] request hash; with KEYS[2], the
-- request's input kept beside its job, read in the same step (the claim and the read are one round trip).
-- ARGV[1] percent complete, ARGV[2] now (ms), ARGV[3] ttl seconds, and to make a missing record:
-- ARGV[4] function id, ARGV[5] version id
-- Returns the state after the call: 'in-progress', the terminal state found, or 'missing' (no record, no ids);
-- with KEYS[2], {state, input (nil when gone)}.
local function answer(state)
  if #KEYS >= 2 then return {state, redis.call('GET', KEYS[2])} end
  return state
end
local state = redis.call('HGET', KEYS[1], 'state')
if state == 'fulfilled' or state == 'errored' or state == 'delivered' then return answer(state) end
if not state then
  if not ARGV[4] then return answer('missing') end
  redis.call('HSET', KEYS[1], 'fid', ARGV[4], 'vid', ARGV[5], 'created', ARGV[2])
end
redis.call('HSET', KEYS[1], 'state', 'in-progress', 'pct', ARGV[1], 'updated', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return answer('in-progress')
