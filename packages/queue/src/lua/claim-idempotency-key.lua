-- Claims an Idempotency-Key for a new request, or finds the request it already started.
-- KEYS[1] idempotency key (see keys.ts)
-- ARGV[1] the new request's id, ARGV[2] the call's fingerprint (function, version, body),
-- ARGV[3] seconds the claim holds until `confirm` extends it (a request that never got queued frees its key)
-- Returns {'new'} when claimed for ARGV[1], {'existing', requestId} when the same call came before,
-- {'mismatch', requestId} when the key was used for a different call.
local held = redis.call('GET', KEYS[1])
if not held then
  redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. ARGV[2], 'EX', ARGV[3])
  return {'new'}
end
local sep = string.find(held, ' ', 1, true)
local requestId = string.sub(held, 1, sep - 1)
if string.sub(held, sep + 1) == ARGV[2] then return {'existing', requestId} end
return {'mismatch', requestId}
