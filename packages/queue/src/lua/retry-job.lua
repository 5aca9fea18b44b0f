-- A job failed in a way worth another try: it leaves the stream for the delayed set until its pause is over
-- (maintain-queue.lua puts it back).
-- KEYS[1] queue stream, KEYS[2] delayed (sorted set), KEYS[3] delayed jobs (hash)
-- ARGV[1] consumer group, ARGV[2] entry id, ARGV[3] request id, ARGV[4] the entry (JSON: id, f, j, m, a, s),
-- ARGV[5] when the retry is due (ms)
-- Returns 1 when delayed, 0 when the entry was no longer this consumer's (recovered as stalled meanwhile: that
-- copy runs instead).
if redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('XDEL', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
return 1
