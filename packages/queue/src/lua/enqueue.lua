-- Queues a new invocation: its record (state 'queued'), its input when kept beside the job, and its job, in one
-- step, so that none exists without the others. A second enqueue of the same request id is a no-op.
-- Registered under two names by its number of keys (lua-scripts.ts): KEYS[1] request hash, KEYS[2] queue stream,
-- and KEYS[3] the request's input when it is kept beside the job.
-- ARGV[1] ttl seconds, ARGV[2] function id, ARGV[3] the principal that made the request ('' when unknown),
-- ARGV[4] the job (JSON, without the ids the entry and the keys carry), ARGV[5] attempts allowed for retryable
-- failures, ARGV[6] the account whose bytes these are (queue-bytes.lua), ARGV[7] the most bytes the version's
-- queues may hold (0: no bound), ARGV[8] the input's bytes (optional): with KEYS[3] kept there, without it carried
-- in the entry itself (field 'b', raw)
-- Returns 1 when queued, 0 when the request exists already, -1 when its bytes would take the version's queues past
-- ARGV[7] (nothing is stored then).
-- What the keys say is not sent again (every byte a client sends is Redis' work): the request id ends the record's
-- key, the version id follows the tag in the stream's (keys.ts), and the time is Redis' own.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local requestId = string.match(KEYS[1], '[^:]+$')
local versionId = string.match(KEYS[2], ':q:{[^}]*}:([^:]+)')
local bytes = #ARGV[4] + #(ARGV[8] or '')
if not hold_queue_bytes(KEYS[2], requestId, ARGV[6], bytes, tonumber(ARGV[7])) then return -1 end
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
-- Entry fields: id = request id, f = function id, j = job, m = attempts allowed, b = the input's bytes when the
-- entry carries them (later: a = attempts made, s = stalls survived). The version is the queue's; the entry's id
-- says when it was queued.
local sid
if #KEYS >= 3 then
  redis.call('SET', KEYS[3], ARGV[8], 'EX', ARGV[1])
  sid = redis.call('XADD', KEYS[2], '*', 'id', requestId, 'f', ARGV[2], 'j', ARGV[4], 'm', ARGV[5])
elseif ARGV[8] then
  sid = redis.call('XADD', KEYS[2], '*', 'id', requestId, 'f', ARGV[2], 'j', ARGV[4], 'm', ARGV[5], 'b', ARGV[8])
else
  sid = redis.call('XADD', KEYS[2], '*', 'id', requestId, 'f', ARGV[2], 'j', ARGV[4], 'm', ARGV[5])
end
-- 'sid' says where the job waits: withdraw and position find it without a scan.
redis.call('HSET', KEYS[1], 'state', 'queued', 'fid', ARGV[2], 'vid', versionId, 'pct', '0',
  'created', now, 'updated', now, 'by', ARGV[3], 'sid', sid)
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
