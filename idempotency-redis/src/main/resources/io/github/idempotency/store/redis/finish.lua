-- Finishes an owned record (complete or fail).
-- KEYS[1] the record's hash
-- ARGV[1] owner, ARGV[2] now (epoch milliseconds), ARGV[3] time to live in milliseconds,
-- ARGV[4...] field, value, ... to set (status, updated_at, expires_at, response or error)
-- Returns 1, or 0 when the record is not IN_PROGRESS and owned by ARGV[1].
-- An IN_PROGRESS record holds no response or error (a takeover removes them), so setting
-- the fields is enough.
local key = KEYS[1]
local state = redis.call('HMGET', key, 'status', 'owner', 'expires_at')
if state[1] ~= 'IN_PROGRESS' or state[2] ~= ARGV[1] or tonumber(state[3]) <= tonumber(ARGV[2]) then
	return 0
end
redis.call('HSET', key, unpack(ARGV, 4))
redis.call('PEXPIRE', key, ARGV[3])
return 1
