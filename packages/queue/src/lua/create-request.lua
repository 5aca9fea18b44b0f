-- Creates the record of a new invocation in state 'queued'. A second create for the same id is a no-op.
-- KEYS[1] request hash
-- ARGV[1] ttl seconds, ARGV[2] function id, ARGV[3] version id, ARGV[4] now (ms),
-- ARGV[5] the principal that made the request ('' when unknown): status, stream and position are its
-- Returns 1 when created, 0 when it already existed.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'state', 'queued', 'fid', ARGV[2], 'vid', ARGV[3], 'pct', '0',
  'created', ARGV[4], 'updated', ARGV[4], 'by', ARGV[5] or '')
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
