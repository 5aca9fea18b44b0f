-- The result was handed to a client from an inline reply: leave the same 'delivered' tombstone a
-- take-result would, so the id answers 404 afterwards and late duplicates cannot write.
-- KEYS[1] request hash
-- Returns 1 when marked, 0 when the request was not terminal (or is gone).
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'fulfilled' and state ~= 'errored' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'delivered')
redis.call('HDEL', KEYS[1], 'body', 'hdrs')
return 1
