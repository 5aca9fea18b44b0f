-- A queue's counts, in one step.
-- KEYS[1] queue stream, KEYS[2] delayed (sorted set)
-- ARGV[1] consumer group
-- Returns {jobs in the stream (waiting or running), running (delivered, not done), retries waiting out a pause}.
local running = 0
local summary = redis.pcall('XPENDING', KEYS[1], ARGV[1])
if type(summary) == 'table' and not summary.err then running = summary[1] end
return {redis.call('XLEN', KEYS[1]), running, redis.call('ZCARD', KEYS[2])}
