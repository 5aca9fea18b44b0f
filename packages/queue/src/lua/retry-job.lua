-- A job failed in a way worth another try: it leaves the stream for the delayed set until its pause is over
-- (maintain-queue.lua puts it back).
-- KEYS[1] queue stream, KEYS[2] delayed (sorted set), KEYS[3] delayed jobs (hash)
-- ARGV[1] consumer group, ARGV[2] entry id, ARGV[3] request id, ARGV[4] the entry (JSON: id, f, j, m, a, s),
-- ARGV[5] when the retry is due (ms). The input's bytes an entry carries (field 'b') are copied here, not sent
-- back by the worker: they join the kept entry's JSON (cjson keeps every byte of a string).
-- Returns 1 when delayed, 0 when the entry was no longer this consumer's (recovered as stalled meanwhile: that
-- copy runs instead).
if redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
local kept = ARGV[4]
local entry = redis.call('XRANGE', KEYS[1], ARGV[2], ARGV[2])[1]
if entry then
  local f = entry[2]
  for i = 1, #f, 2 do
    if f[i] == 'b' then
      local e = cjson.decode(kept)
      e.b = f[i + 1]
      kept = cjson.encode(e)
    end
  end
end
redis.call('XDEL', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[3], kept)
return 1
