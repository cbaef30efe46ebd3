-- Claims one record: the decision of ClaimRules, on the server, in one step.
-- KEYS[1] the record's hash
-- ARGV[1] now, ARGV[2] owner, ARGV[3] fingerprint ('' for none),
-- ARGV[4] lease_until, ARGV[5] expires_at (epoch milliseconds of the caller's clock),
-- ARGV[6] time to live in milliseconds (relative, so the caller's clock cannot drop the key early)
-- Returns { 'ACQUIRED' } for a new record (the caller knows every field of it), or
-- { outcome, field, value, ... }: the record as found, or as a takeover left it.
local key = KEYS[1]
local now = tonumber(ARGV[1])
local fingerprint = ARGV[3]

local function create()
	local fields = { 'status', 'IN_PROGRESS', 'owner', ARGV[2], 'attempt', '1', 'lease_until', ARGV[4],
		'created_at', ARGV[1], 'updated_at', ARGV[1], 'expires_at', ARGV[5] }
	if fingerprint ~= '' then
		fields[#fields + 1] = 'fingerprint'
		fields[#fields + 1] = fingerprint
	end
	redis.call('HSET', key, unpack(fields))
	redis.call('PEXPIRE', key, ARGV[6])
	return { 'ACQUIRED' }
end

local found = redis.call('HGETALL', key)
if #found == 0 then
	return create()
end
local record = {}
for i = 1, #found, 2 do
	record[found[i]] = found[i + 1]
end
if tonumber(record.expires_at) <= now then
	-- over, though Redis has not dropped it yet: a new record in its place
	redis.call('DEL', key)
	return create()
end

local function answer(outcome, fields)
	local reply = { outcome }
	for i = 1, #fields do
		reply[i + 1] = fields[i]
	end
	return reply
end

if fingerprint ~= '' and record.fingerprint and record.fingerprint ~= fingerprint then
	return answer('MISMATCH', found)
end
if record.status == 'COMPLETED' then
	return answer('DUPLICATE', found)
end
if record.status == 'FAILED' then
	return answer('FAILED', found)
end
if tonumber(record.lease_until) > now then
	return answer('IN_PROGRESS', found)
end
-- takeover: next attempt, new owner; recovery point, fingerprint and created_at kept
redis.call('HDEL', key, 'response', 'error_type', 'error_message')
redis.call('HSET', key, 'status', 'IN_PROGRESS', 'owner', ARGV[2], 'attempt', tonumber(record.attempt) + 1,
	'lease_until', ARGV[4], 'updated_at', ARGV[1], 'expires_at', ARGV[5])
if not record.fingerprint and fingerprint ~= '' then
	redis.call('HSET', key, 'fingerprint', fingerprint)
end
redis.call('PEXPIRE', key, ARGV[6])
return answer('ACQUIRED', redis.call('HGETALL', key))
