-- Takes the job of a request settled already (nothing to store) off its queue: off the group's pending list, out of
-- the stream, its kept input dropped, the bytes it held released (queue-bytes.lua).
-- Registered under two names by its number of keys (lua-scripts.ts): KEYS[1] queue stream, and KEYS[2] the
-- request's input when it was kept beside the job.
-- ARGV[1] consumer group, ARGV[2] the job's entry id, ARGV[3] request id
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
if #KEYS >= 2 then redis.call('DEL', KEYS[2]) end
release_queue_bytes(KEYS[1], ARGV[3])
return 1
