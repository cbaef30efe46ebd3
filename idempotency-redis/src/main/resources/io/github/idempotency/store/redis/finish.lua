-- Finishes owned records (complete or fail), each key on its own.
-- KEYS[i] the hash of the i-th record (one cluster hash slot for all of them)
-- ARGV[1] now (epoch milliseconds); then for each key: owner, time to live in milliseconds,
-- n, and n arguments field, value, ... to set (status, updated_at, expires_at, response or error)
-- Returns one number per key: 1, or 0 when the record is not IN_PROGRESS and owned by its owner.
-- An IN_PROGRESS record holds no response or error (a takeover removes them), so setting
-- the fields is enough.
local now = tonumber(ARGV[1])
local finished = {}
local cursor = 2
for i = 1, #KEYS do
	local key = KEYS[i]
	local owner = ARGV[cursor]
	local ttl = ARGV[cursor + 1]
	local count = tonumber(ARGV[cursor + 2])
	local first = cursor + 3
	cursor = first + count
	local state = redis.call('HMGET', key, 'status', 'owner', 'expires_at')
	if state[1] ~= 'IN_PROGRESS' or state[2] ~= owner or tonumber(state[3]) <= now then
		finished[i] = 0
	else
		redis.call('HSET', key, unpack(ARGV, first, cursor - 1))
		redis.call('PEXPIRE', key, ttl)
		finished[i] = 1
	end
end
return finished
