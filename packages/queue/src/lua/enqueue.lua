-- Queues a new invocation: its record (state 'queued'), its input when kept beside the job, and its job, in one
-- step, so that none exists without the others. A second enqueue of the same request id is a no-op.
-- Registered under two names by its number of keys (lua-scripts.ts): KEYS[1] request hash, KEYS[2] queue stream,
-- and KEYS[3] the request's input when it is kept beside the job.
-- ARGV[1] ttl seconds, ARGV[2] function id, ARGV[3] version id, ARGV[4] now (ms),
-- ARGV[5] the principal that made the request ('' when unknown), ARGV[6] request id,
-- ARGV[7] the job (JSON, without the ids the entry carries), ARGV[8] attempts allowed for retryable failures,
-- with KEYS[3]: ARGV[9] the input (bytes)
-- Returns 1 when queued, 0 when the request exists already.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if #KEYS >= 3 then redis.call('SET', KEYS[3], ARGV[9], 'EX', ARGV[1]) end
-- Entry fields: id = request id, f = function id, j = job, m = attempts allowed (later: a = attempts made,
-- s = stalls survived). The version is the queue's.
local sid = redis.call('XADD', KEYS[2], '*', 'id', ARGV[6], 'f', ARGV[2], 'j', ARGV[7], 'm', ARGV[8])
-- 'sid' says where the job waits: withdraw and position find it without a scan.
redis.call('HSET', KEYS[1], 'state', 'queued', 'fid', ARGV[2], 'vid', ARGV[3], 'pct', '0',
  'created', ARGV[4], 'updated', ARGV[4], 'by', ARGV[5], 'sid', sid)
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
