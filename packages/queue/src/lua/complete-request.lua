-- Stores the result and announces it. First writer wins: a terminal state is never overwritten, and a
-- request that expired or was already delivered is not resurrected.
-- Registered under three names by its number of keys (lua-scripts.ts): KEYS[1] request hash; a worker's result
-- also finishes its job, in KEYS[2] (its queue stream), and drops the job's kept input, KEYS[3], when there is one.
-- ARGV[1] http status (< 400: 'fulfilled', else 'errored'), ARGV[2] content type, ARGV[3] extra headers (JSON),
-- ARGV[4] body (bytes), ARGV[5] now (ms), ARGV[6] ttl seconds, ARGV[7] completion channel, ARGV[8] request id,
-- ARGV[9] reply channel of the accepting gateway ('' for none), ARGV[10] largest body sent inline there,
-- ARGV[11] object-store key of a large result ('' for none; such a result is never sent inline),
-- ARGV[12] the failure's error code ('' for a success, or a failure that names none),
-- with KEYS[2]: ARGV[13] the consumer group, ARGV[14] the job's entry id
-- Returns 1 when stored, 0 when ignored.
-- Every completion is counted ('runs'): more than one means the function ran to completion twice for one
-- request (a job re-delivered while its first run was still alive), which the fault suite checks for.
-- A job already off the pending list was finished by an earlier call whose reply was lost (the worker sends
-- again while Redis comes back): not a second run.
local resent = false
if #KEYS >= 2 then
  -- The job is done whatever becomes of this result: off the group's pending list, out of the stream.
  resent = redis.call('XACK', KEYS[2], ARGV[13], ARGV[14]) == 0
  redis.call('XDEL', KEYS[2], ARGV[14])
  if #KEYS >= 3 then redis.call('DEL', KEYS[3]) end
end
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return 0 end
if state == 'fulfilled' or state == 'errored' or state == 'delivered' then
  if not resent then redis.call('HINCRBY', KEYS[1], 'runs', 1) end
  return 0
end
-- Not terminal yet: no run completed before this one ('runs' is set with the result, one command fewer).
local terminal = 'errored'
if tonumber(ARGV[1]) < 400 then terminal = 'fulfilled' end
redis.call('HSET', KEYS[1], 'state', terminal, 'pct', '100', 'code', ARGV[1], 'ctype', ARGV[2],
  'hdrs', ARGV[3], 'body', ARGV[4], 'updated', ARGV[5], 'err', ARGV[12], 'runs', '1')
if ARGV[11] ~= '' then redis.call('HSET', KEYS[1], 'obj', ARGV[11]) end
redis.call('EXPIRE', KEYS[1], ARGV[6])
if ARGV[9] ~= '' and ARGV[11] == '' and #ARGV[4] <= tonumber(ARGV[10]) then
  -- Frame: id, status, error code, content type, headers JSON (no raw newlines), then the body's bytes.
  redis.call('PUBLISH', ARGV[9],
    ARGV[8] .. '\n' .. ARGV[1] .. '\n' .. ARGV[12] .. '\n' .. ARGV[2] .. '\n' .. ARGV[3] .. '\n' .. ARGV[4])
end
redis.call('PUBLISH', ARGV[7], ARGV[8])
return 1
