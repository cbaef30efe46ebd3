-- Claims records: the decision of ClaimRules, on the server, for each key in one step, in
-- the order of the keys (a key named twice is acquired at most once: the second finds the
-- first's live claim).
-- KEYS[i] the hash of the i-th record (one cluster hash slot for all of them)
-- ARGV[1] now (epoch milliseconds of the caller's clock); then for each key four
-- arguments: owner, fingerprint ('' for none), lease and retention in milliseconds. A
-- claimed record's lease_until is now + lease, its expires_at lease_until + retention, its
-- time to live lease + retention (relative, so the caller's clock cannot drop the key early)
-- Returns one reply per key: { 'ACQUIRED' } for a new record (the caller knows every field
-- of it); { 'DUPLICATE' } or { 'DUPLICATE', response }, { 'FAILED', error_type[, error_message] }
-- and { 'MISMATCH', status, fingerprint }: only what the caller acts on, so that a duplicate
-- costs one HMGET; else { outcome, field, value, ... }: the record as found (IN_PROGRESS),
-- or as a takeover left it (ACQUIRED).
local now_text = ARGV[1]
local now = tonumber(now_text)

local function answer(outcome, fields)
	local reply = { outcome }
	for i = 1, #fields do
		reply[i + 1] = fields[i]
	end
	return reply
end

-- a new claim's lease_until, expires_at and time to live
local function times(lease, retention)
	local lease_ms, retention_ms = tonumber(lease), tonumber(retention)
	return string.format('%d', now + lease_ms), string.format('%d', now + lease_ms + retention_ms),
		string.format('%d', lease_ms + retention_ms)
end

local function claim(key, owner, fingerprint, lease, retention)
	local function create()
		local lease_until, expires_at, ttl = times(lease, retention)
		local fields = { 'status', 'IN_PROGRESS', 'owner', owner, 'attempt', '1', 'lease_until', lease_until,
			'created_at', now_text, 'updated_at', now_text, 'expires_at', expires_at }
		if fingerprint ~= '' then
			fields[#fields + 1] = 'fingerprint'
			fields[#fields + 1] = fingerprint
		end
		redis.call('HSET', key, unpack(fields))
		redis.call('PEXPIRE', key, ttl)
		return { 'ACQUIRED' }
	end

	-- the fields every outcome is decided on, and the one a duplicate answers with
	local state = redis.call('HMGET', key, 'status', 'expires_at', 'fingerprint', 'response')
	local status = state[1]
	if not status then
		return create()
	end
	if tonumber(state[2]) <= now then
		-- over, though Redis has not dropped it yet: a new record in its place
		redis.call('DEL', key)
		return create()
	end
	if fingerprint ~= '' and state[3] and state[3] ~= fingerprint then
		return { 'MISMATCH', status, state[3] }
	end
	if status == 'COMPLETED' then
		return state[4] and { 'DUPLICATE', state[4] } or { 'DUPLICATE' }
	end
	if status == 'FAILED' then
		local failure = redis.call('HMGET', key, 'error_type', 'error_message')
		return failure[2] and { 'FAILED', failure[1], failure[2] } or { 'FAILED', failure[1] }
	end

	local found = redis.call('HGETALL', key)
	local record = {}
	for i = 1, #found, 2 do
		record[found[i]] = found[i + 1]
	end
	if tonumber(record.lease_until) > now then
		return answer('IN_PROGRESS', found)
	end
	-- takeover: next attempt, new owner; recovery point, fingerprint and created_at kept
	local lease_until, expires_at, ttl = times(lease, retention)
	redis.call('HDEL', key, 'response', 'error_type', 'error_message')
	redis.call('HSET', key, 'status', 'IN_PROGRESS', 'owner', owner, 'attempt', tonumber(record.attempt) + 1,
		'lease_until', lease_until, 'updated_at', now_text, 'expires_at', expires_at)
	if not record.fingerprint and fingerprint ~= '' then
		redis.call('HSET', key, 'fingerprint', fingerprint)
	end
	redis.call('PEXPIRE', key, ttl)
	return answer('ACQUIRED', redis.call('HGETALL', key))
end

local replies = {}
for i = 1, #KEYS do
	local first = 2 + 4 * (i - 1)
	replies[i] = claim(KEYS[i], ARGV[first], ARGV[first + 1], ARGV[first + 2], ARGV[first + 3])
end
return replies
