-- Puts back what is due: jobs whose worker stopped renewing their lease (it died, or hung) and retries whose
-- pause is over. Every worker runs it now and then; running it twice at once is harmless.
-- KEYS[1] queue stream, KEYS[2] delayed (sorted set), KEYS[3] delayed jobs (hash)
-- ARGV[1] consumer group, ARGV[2] lease (ms): a job not renewed for this long is stalled,
-- ARGV[3] stalls a job survives, ARGV[4] now (ms), ARGV[5] the records' key prefix (keys.ts requestKeyPrefix),
-- ARGV[6] most jobs handled per call, ARGV[7] idle time (ms) after which a consumer holding no job leaves the group
-- Returns the entries (JSON: id, f, j, m, a, s) of jobs that stalled more often than they may: the caller fails them.

-- A record's key is built here rather than passed in: which requests are due is only known inside. It shares the
-- stream's hash slot (a request id begins with its version's tag, keys.ts), as BullMQ's scripts name job keys.
local function record(id)
  return ARGV[5] .. '{' .. string.lower(string.sub(id, 1, 8)) .. '}:' .. id
end

local function requeue(e)
  local sid
  if e.b then
    sid = redis.call('XADD', KEYS[1], '*', 'id', e.id, 'f', e.f or '', 'j', e.j or '', 'm', e.m, 'a', e.a, 's', e.s,
      'b', e.b)
  else
    sid = redis.call('XADD', KEYS[1], '*', 'id', e.id, 'f', e.f or '', 'j', e.j or '', 'm', e.m, 'a', e.a, 's', e.s)
  end
  -- Withdraw and position follow the job to its new place; an expired record stays gone. pcall: a job whose id
  -- does not carry its queue's tag (never made by the gateway) would name another slot on a cluster.
  local key = record(e.id)
  if redis.pcall('EXISTS', key) == 1 then redis.pcall('HSET', key, 'sid', sid) end
end

local failed = {}
local pending = redis.pcall('XPENDING', KEYS[1], ARGV[1], 'IDLE', ARGV[2], '-', '+', ARGV[6])
if type(pending) == 'table' and not pending.err then
  for _, p in ipairs(pending) do
    local sid = p[1]
    local entry = redis.call('XRANGE', KEYS[1], sid, sid)[1]
    redis.call('XACK', KEYS[1], ARGV[1], sid)
    if entry then
      redis.call('XDEL', KEYS[1], sid)
      local e = {}
      local f = entry[2]
      for i = 1, #f, 2 do e[f[i]] = f[i + 1] end
      e.id = e.id or ''
      e.m = e.m or '1'
      e.a = e.a or '0'
      e.s = tostring(tonumber(e.s or '0') + 1)
      if tonumber(e.s) > tonumber(ARGV[3]) then
        -- The caller answers it from its ids and job: the input's bytes are not sent back. The job is out of the
        -- queue for good: what it held there is released (queue-bytes.lua).
        e.b = nil
        table.insert(failed, cjson.encode(e))
        release_queue_bytes(KEYS[1], e.id)
      else
        requeue(e)
      end
    end
  end
end

local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[4], 'LIMIT', 0, ARGV[6])
for _, id in ipairs(due) do
  local e = redis.call('HGET', KEYS[3], id)
  redis.call('ZREM', KEYS[2], id)
  redis.call('HDEL', KEYS[3], id)
  if e then requeue(cjson.decode(e)) end
end
-- A worker that stopped leaves its name in the group; a live one reads every few seconds. A consumer removed
-- while alive is simply added again by its next read (it holds nothing: nothing is lost).
local consumers = redis.pcall('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])
if type(consumers) == 'table' and not consumers.err then
  for _, c in ipairs(consumers) do
    local f = {}
    for i = 1, #c, 2 do f[c[i]] = c[i + 1] end
    if f['pending'] == 0 and f['idle'] > tonumber(ARGV[7]) then
      redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], f['name'])
    end
  end
end
return failed
