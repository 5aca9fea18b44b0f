-- Stores the result and announces it. First writer wins: a terminal state is never overwritten, and a
-- request that expired or was already delivered is not resurrected.
-- KEYS[1] request hash, KEYS[2] the finished job's queue stream, KEYS[3] its kept input (for a result that
-- finishes no job, or a job whose input was not kept, the request hash again: untouched)
-- ARGV[1] terminal state ('fulfilled' | 'errored'), ARGV[2] http status, ARGV[3] content type,
-- ARGV[4] extra headers (JSON), ARGV[5] body (bytes), ARGV[6] now (ms), ARGV[7] ttl seconds,
-- ARGV[8] completion channel, ARGV[9] request id,
-- ARGV[10] reply channel of the accepting gateway ('' for none), ARGV[11] largest body sent inline there,
-- ARGV[12] object-store key of a large result ('' for none; such a result is never sent inline),
-- ARGV[13] the failure's error code ('' for a success, or a failure that names none),
-- ARGV[14] the consumer group ('' when no job is finished), ARGV[15] the job's entry id,
-- ARGV[16] '1' when KEYS[3] is the job's kept input, to drop
-- Returns 1 when stored, 0 when ignored.
-- Every completion is counted ('runs'): more than one means the function ran to completion twice for one
-- request (a job re-delivered while its first run was still alive), which the fault suite checks for.
if ARGV[14] ~= '' then
  -- The job is done whatever becomes of this result: off the group's pending list, out of the stream.
  redis.call('XACK', KEYS[2], ARGV[14], ARGV[15])
  redis.call('XDEL', KEYS[2], ARGV[15])
  if ARGV[16] == '1' then redis.call('DEL', KEYS[3]) end
end
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return 0 end
if state == 'fulfilled' or state == 'errored' or state == 'delivered' then
  redis.call('HINCRBY', KEYS[1], 'runs', 1)
  return 0
end
-- Not terminal yet: no run completed before this one ('runs' is set with the result, one command fewer).
redis.call('HSET', KEYS[1], 'state', ARGV[1], 'pct', '100', 'code', ARGV[2], 'ctype', ARGV[3],
  'hdrs', ARGV[4], 'body', ARGV[5], 'updated', ARGV[6], 'err', ARGV[13], 'runs', '1')
if ARGV[12] ~= '' then redis.call('HSET', KEYS[1], 'obj', ARGV[12]) end
redis.call('EXPIRE', KEYS[1], ARGV[7])
if ARGV[10] ~= '' and ARGV[12] == '' and #ARGV[5] <= tonumber(ARGV[11]) then
  -- Frame: id, status, error code, content type, headers JSON (no raw newlines), then the body's bytes.
  redis.call('PUBLISH', ARGV[10],
    ARGV[9] .. '\n' .. ARGV[2] .. '\n' .. ARGV[13] .. '\n' .. ARGV[3] .. '\n' .. ARGV[4] .. '\n' .. ARGV[5])
end
redis.call('PUBLISH', ARGV[8], ARGV[9])
return 1
