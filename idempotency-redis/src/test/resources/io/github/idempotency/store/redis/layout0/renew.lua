-- Extends the lease of an owned record and, when given, stores its recovery point.
-- KEYS[1] the record's hash
-- ARGV[1] owner, ARGV[2] now, ARGV[3] lease_until (epoch milliseconds),
-- ARGV[4] retention in milliseconds, ARGV[5] the recovery point (optional)
-- As a claim does, the record is kept until at least lease_until + retention (a run that
-- crashes after running longer than its retention leaves its attempt and recovery point
-- to the run that takes it over); expires_at never moves back; the time to live follows
-- it (expires_at - now, relative: at least lease + retention).
-- Returns 1, or 0 when the record is not IN_PROGRESS and owned by ARGV[1].
local key = KEYS[1]
local now = tonumber(ARGV[2])
local state = redis.call('HMGET', key, 'status', 'owner', 'expires_at')
if state[1] ~= 'IN_PROGRESS' or state[2] ~= ARGV[1] or tonumber(state[3]) <= now then
	return 0
end
local expires_at = math.max(tonumber(state[3]), tonumber(ARGV[3]) + tonumber(ARGV[4]))
redis.call('HSET', key, 'lease_until', ARGV[3], 'updated_at', ARGV[2], 'expires_at', string.format('%d', expires_at))
if ARGV[5] then
	redis.call('HSET', key, 'recovery_point', ARGV[5])
end
redis.call('PEXPIRE', key, string.format('%d', expires_at - now))
return 1
