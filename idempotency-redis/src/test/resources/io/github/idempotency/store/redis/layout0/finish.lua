-- Finishes owned records (complete or fail), each key on its own.
-- KEYS[i] the hash of the i-th record (one cluster hash slot for all of them)
-- ARGV[1] now (epoch milliseconds); then for each key: owner, retention in milliseconds,
-- status (COMPLETED or FAILED), n, and n values: the response (none for a void result) of
-- a COMPLETED record, error_type and error_message (optional) of a FAILED one.
-- Returns one number per key: 1, or 0 when the record is not IN_PROGRESS and owned by its owner.
-- An IN_PROGRESS record holds no response or error (a takeover removes them), so setting
-- the fields is enough; the record is kept for the retention from now.
local now_text = ARGV[1]
local now = tonumber(now_text)
local finished = {}
local cursor = 2
for i = 1, #KEYS do
	local key = KEYS[i]
	local owner = ARGV[cursor]
	local retention = ARGV[cursor + 1]
	local status = ARGV[cursor + 2]
	local count = tonumber(ARGV[cursor + 3])
	local first = cursor + 4
	cursor = first + count
	local state = redis.call('HMGET', key, 'status', 'owner', 'expires_at')
	if state[1] ~= 'IN_PROGRESS' or state[2] ~= owner or tonumber(state[3]) <= now then
		finished[i] = 0
	else
		local fields = { 'status', status, 'updated_at', now_text,
			'expires_at', string.format('%d', now + tonumber(retention)) }
		local names = (status == 'COMPLETED') and { 'response' } or { 'error_type', 'error_message' }
		for v = 1, count do
			fields[#fields + 1] = names[v]
			fields[#fields + 1] = ARGV[first + v - 1]
		end
		redis.call('HSET', key, unpack(fields))
		redis.call('PEXPIRE', key, retention)
		finished[i] = 1
	end
end
return finished
