-- Reads an invocation for a client. A terminal result is handed out once: the record becomes a
-- 'delivered' tombstone (body dropped) that answers 404 afterwards and blocks late duplicate writes.
-- KEYS[1] request hash
-- ARGV[1] 'peek' reads a terminal result without handing it out (it is marked delivered later, once the
--         client has it: mark-delivered.lua)
-- Returns {state, pct, fid, vid, partial} while not terminal ({} when missing),
-- or {state, pct, fid, vid, code, ctype, hdrs, body, obj, err} for the one call that takes the result.
local v = redis.call('HMGET', KEYS[1], 'state', 'pct', 'fid', 'vid', 'partial')
if not v[1] then return {} end
if v[1] ~= 'fulfilled' and v[1] ~= 'errored' then return v end
local r = redis.call('HMGET', KEYS[1], 'code', 'ctype', 'hdrs', 'body', 'obj', 'err')
if ARGV[1] ~= 'peek' then
  redis.call('HSET', KEYS[1], 'state', 'delivered')
  redis.call('HDEL', KEYS[1], 'body', 'hdrs')
end
return {v[1], v[2], v[3], v[4], r[1], r[2], r[3], r[4], r[5], r[6]}
