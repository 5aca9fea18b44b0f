-- Queues a new invocation: its record (state 'queued'), its input when kept beside the job, and its job, in one
-- step, so that none exists without the others. A second enqueue of the same request id is a no-op.
-- KEYS[1] request hash, KEYS[2] queue stream, KEYS[3] request input (written only when ARGV[8] is not '')
-- ARGV[1] ttl seconds, ARGV[2] function id, ARGV[3] version id, ARGV[4] now (ms),
-- ARGV[5] the principal that made the request ('' when unknown), ARGV[6] request id, ARGV[7] the job (JSON),
-- ARGV[8] the input kept beside the job (bytes; '' for none), ARGV[9] attempts allowed for retryable failures
-- Returns 1 when queued, 0 when the request exists already.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if ARGV[8] ~= '' then redis.call('SET', KEYS[3], ARGV[8], 'EX', ARGV[1]) end
-- Entry fields: id = request id, j = job, m = attempts allowed (later: a = attempts made, s = stalls survived).
local sid = redis.call('XADD', KEYS[2], '*', 'id', ARGV[6], 'j', ARGV[7], 'm', ARGV[9])
-- 'sid' says where the job waits: withdraw and position find it without a scan.
redis.call('HSET', KEYS[1], 'state', 'queued', 'fid', ARGV[2], 'vid', ARGV[3], 'pct', '0',
  'created', ARGV[4], 'updated', ARGV[4], 'by', ARGV[5], 'sid', sid)
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
