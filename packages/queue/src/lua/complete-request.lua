-- Stores the result and announces it. First writer wins: a terminal state is never overwritten, and a
-- request that was already delivered is not resurrected.
-- Registered under three names by its number of keys (lua-scripts.ts): KEYS[1] request hash; a worker's result
-- also finishes its job, in KEYS[2] (its queue stream), drops the job's kept input, KEYS[3], when there is one, and
-- releases the bytes the request held in its queue (queue-bytes.lua).
-- ARGV[1] the status an HTTP surface answers with, ARGV[2] content type, ARGV[3] extra headers (JSON),
-- ARGV[4] body (bytes), ARGV[5] ttl seconds, ARGV[6] the accepting gateway's id when the whole result goes to it
-- inline ('' for none), ARGV[7] object-store key of a large result ('' for none),
-- ARGV[8] the failure's error code ('' for a success: the record's state, 'fulfilled' or 'errored', follows it),
-- with KEYS[2]: ARGV[9] the job's entry id
-- Returns 1 when stored, 0 when ignored.
-- What the keys say is not sent again (every byte a client sends is Redis' work): the request id ends the record's
-- key, and the channels are named from the key prefix that precedes ':req:' (keys.ts `completions`, `replies`).
local requestId = string.match(KEYS[1], '[^:]+$')
local prefix = string.match(KEYS[1], '^(.*):req:{')
-- The consumer group of every queue (keys.ts WORKERS_GROUP).
local group = 'workers'
-- Every completion is counted ('runs'): more than one means the function ran to completion twice for one
-- request (a job re-delivered while its first run was still alive), which the fault suite checks for.
-- The answer remembers the queue entry whose run stored it ('done'): the same entry again is an earlier call
-- whose reply was lost (the worker sends again while Redis comes back), not a second run; any other entry (a run
-- of the job before it stalled and was queued again, however late it finishes) is one.
local entry = nil
local state = redis.call('HGET', KEYS[1], 'state')
if #KEYS >= 2 then
  -- The job is done whatever becomes of this result: off the group's pending list, out of the stream.
  redis.call('XACK', KEYS[2], group, ARGV[9])
  if not state then entry = redis.call('XRANGE', KEYS[2], ARGV[9], ARGV[9])[1] end
  redis.call('XDEL', KEYS[2], ARGV[9])
  if #KEYS >= 3 then redis.call('DEL', KEYS[3]) end
  release_queue_bytes(KEYS[2], requestId)
end
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
if not state then
  -- A job still queued when its record expired was accepted all the same: its record is made again from the job's
  -- entry (the function id it carries, the version its queue's key names). Without the entry, nothing is stored.
  if not entry then return 0 end
  local fid = ''
  for i = 1, #entry[2], 2 do
    if entry[2][i] == 'f' then fid = entry[2][i + 1] end
  end
  redis.call('HSET', KEYS[1], 'fid', fid, 'vid', string.match(KEYS[2], ':q:{[^}]*}:([^:]+)'), 'created', now)
elseif state == 'fulfilled' or state == 'errored' or state == 'delivered' then
  if #KEYS < 2 or redis.call('HGET', KEYS[1], 'done') ~= ARGV[9] then redis.call('HINCRBY', KEYS[1], 'runs', 1) end
  return 0
end
-- Not terminal yet: no run completed before this one ('runs' is set with the result, one command fewer).
-- A failure carries its error code, a success none (invocation-result.ts).
local terminal = 'fulfilled'
if ARGV[8] ~= '' then terminal = 'errored' end
redis.call('HSET', KEYS[1], 'state', terminal, 'pct', '100', 'code', ARGV[1], 'ctype', ARGV[2],
  'hdrs', ARGV[3], 'body', ARGV[4], 'updated', now, 'err', ARGV[8], 'runs', '1')
if ARGV[7] ~= '' then redis.call('HSET', KEYS[1], 'obj', ARGV[7]) end
if #KEYS >= 2 then redis.call('HSET', KEYS[1], 'done', ARGV[9]) end
redis.call('EXPIRE', KEYS[1], ARGV[5])
if ARGV[6] ~= '' then
  -- Frame: id, status, error code, content type, headers JSON (no raw newlines), then the body's bytes.
  redis.call('PUBLISH', prefix .. ':replies:' .. ARGV[6],
    requestId .. '\n' .. ARGV[1] .. '\n' .. ARGV[8] .. '\n' .. ARGV[2] .. '\n' .. ARGV[3] .. '\n' .. ARGV[4])
end
redis.call('PUBLISH', prefix .. ':completions', requestId)
return 1
