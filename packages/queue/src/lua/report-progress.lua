-- A running function reports progress (NVCF behaviour: progress): percent complete and an optional partial
-- response. Polls answer 202 with the latest one (NVCF-PERCENT-COMPLETE and the partial body). Ignored once
-- the request is terminal.
-- KEYS[1] request hash
-- ARGV[1] percent, ARGV[2] partial response (bytes, '' for none), ARGV[3] now (ms), ARGV[4] ttl seconds
-- Returns 1 when recorded, 0 when ignored.
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'queued' and state ~= 'in-progress' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'in-progress', 'pct', ARGV[1], 'updated', ARGV[3])
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'partial', ARGV[2]) end
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
