-- Takes a request's job out of its queue while no worker holds it (a cancelled request).
-- KEYS[1] request hash, KEYS[2] queue stream, KEYS[3] delayed (sorted set), KEYS[4] delayed jobs (hash)
-- ARGV[1] consumer group, ARGV[2] request id
-- Returns 1 when taken out (the bytes it held released, queue-bytes.lua), 0 when a worker holds it or the queue
-- does not.
if redis.call('ZREM', KEYS[3], ARGV[2]) == 1 then
  redis.call('HDEL', KEYS[4], ARGV[2])
  release_queue_bytes(KEYS[2], ARGV[2])
  return 1
end
local sid = redis.call('HGET', KEYS[1], 'sid')
if not sid then return 0 end
-- Delivered entries stay on the group's pending list until done (and leave the stream then): an entry in the
-- stream and not pending has not been delivered.
local pending = redis.pcall('XPENDING', KEYS[2], ARGV[1], sid, sid, 1)
if type(pending) == 'table' and not pending.err and #pending > 0 then return 0 end
if redis.call('XDEL', KEYS[2], sid) == 0 then return 0 end
release_queue_bytes(KEYS[2], ARGV[2])
return 1
