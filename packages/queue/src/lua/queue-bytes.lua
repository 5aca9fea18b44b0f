-- The bytes a function version's queues hold (keys.ts queueBytes), shared by the scripts below it in the library
-- (lua-scripts.ts): one hash beside the queue, in its slot, with 't' the version's total, 'a:<account>' each
-- account's part, and 'r:<request id>' → '<bytes> <account>' for each request queued and not yet finished. A
-- request's bytes are added where it is queued (enqueue.lua) and released in the step that takes its job out for
-- good: its answer stored (complete-request.lua), settled already (leave-job.lua), withdrawn (withdraw-job.lua),
-- failed for stalling (maintain-queue.lua), or its version's queues deleted with the hash (retire). A retry waiting
-- out its pause, or a stalled job put back, still holds its bytes.

-- The hash of the version whose queue `stream` is: the shared queue's or one worker's own (`…:w:<worker>`).
local function queue_bytes_key(stream)
  local prefix, tag, version = string.match(stream, '^(.*):q:({[^}]*}):([^:]+)')
  return prefix .. ':q-bytes:' .. tag .. ':' .. version
end

-- Counts a new request's bytes unless they would take the version past `max` (0: no bound). Returns true when
-- counted.
local function hold_queue_bytes(stream, id, account, bytes, max)
  local key = queue_bytes_key(stream)
  if max > 0 and tonumber(redis.call('HGET', key, 't') or '0') + bytes > max then return false end
  redis.call('HINCRBY', key, 't', bytes)
  redis.call('HINCRBY', key, 'a:' .. account, bytes)
  redis.call('HSET', key, 'r:' .. id, bytes .. ' ' .. account)
  return true
end

-- Releases what request `id` held, if it holds anything still (a second release is a no-op). Fields that reach 0
-- go, and the hash with the last of them.
local function release_queue_bytes(stream, id)
  local key = queue_bytes_key(stream)
  local line = redis.call('HGET', key, 'r:' .. id)
  if not line then return end
  local bytes, account = string.match(line, '^(%d+) (.*)$')
  redis.call('HDEL', key, 'r:' .. id)
  if redis.call('HINCRBY', key, 't', -bytes) <= 0 then redis.call('HDEL', key, 't') end
  if redis.call('HINCRBY', key, 'a:' .. account, -bytes) <= 0 then redis.call('HDEL', key, 'a:' .. account) end
end
