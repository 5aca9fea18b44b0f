-- How many jobs wait ahead of a request's in its queue.
-- KEYS[1] request hash, KEYS[2] queue stream, KEYS[3] delayed (sorted set)
-- ARGV[1] consumer group, ARGV[2] request id
-- Returns that number, 0 once a worker has the job (or its retry waits), -1 when the queue does not hold it.
if redis.call('ZSCORE', KEYS[3], ARGV[2]) then return 0 end
local sid = redis.call('HGET', KEYS[1], 'sid')
if not sid then return -1 end
if #redis.call('XRANGE', KEYS[2], sid, sid) == 0 then return -1 end
local last = '0-0'
local groups = redis.pcall('XINFO', 'GROUPS', KEYS[2])
if type(groups) == 'table' and not groups.err then
  for _, g in ipairs(groups) do
    local f = {}
    for i = 1, #g, 2 do f[g[i]] = g[i + 1] end
    if f['name'] == ARGV[1] then last = f['last-delivered-id'] end
  end
end
local function parse(id)
  local dash = string.find(id, '-', 1, true)
  return tonumber(string.sub(id, 1, dash - 1)), tonumber(string.sub(id, dash + 1))
end
local lm, ls = parse(last)
local sm, ss = parse(sid)
if sm < lm or (sm == lm and ss <= ls) then return 0 end
-- Entries between the group's last delivery and this one wait ahead of it, counted a page at a time.
local ahead, from = 0, '(' .. last
while true do
  local page = redis.call('XRANGE', KEYS[2], from, '(' .. sid, 'COUNT', 1000)
  ahead = ahead + #page
  if #page < 1000 then return ahead end
  from = '(' .. page[#page][1]
end
