-- Removes an owned record, so that the next delivery runs the operation again.
-- KEYS[1] the record's hash
-- ARGV[1] owner, ARGV[2] now (epoch milliseconds)
-- Returns 1, or 0 when the record is not IN_PROGRESS and owned by ARGV[1].
local key = KEYS[1]
local state = redis.call('HMGET', key, 'status', 'owner', 'expires_at')
if state[1] ~= 'IN_PROGRESS' or state[2] ~= ARGV[1] or tonumber(state[3]) <= tonumber(ARGV[2]) then
	return 0
end
redis.call('DEL', key)
return 1
