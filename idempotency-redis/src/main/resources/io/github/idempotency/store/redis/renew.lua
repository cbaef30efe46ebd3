-- Extends the lease of an owned record and, when given, stores its recovery point.
-- KEYS[1] the record
-- ARGV[1] owner token, ARGV[2] now, ARGV[3] lease_until (epoch milliseconds),
-- ARGV[4] retention in milliseconds, ARGV[5] the recovery point (optional)
-- As a claim does, the record is kept until at least lease_until + retention (a run that
-- crashes after running longer than its retention leaves its attempt and recovery point
-- to the run that takes it over); expires_at never moves back; the time to live follows
-- it (expires_at - now, relative: at least lease + retention).
-- Returns 1, or 0 when the record is not IN_PROGRESS and owned by ARGV[1].
local key = KEYS[1]
local now = tonumber(ARGV[2])
local r = load(key)
if r == nil or r.status ~= 'P' or r.owner ~= ARGV[1] or r.expires <= now then
	return 0
end
r.lease = tonumber(ARGV[3])
r.updated = now
r.expires = math.max(r.expires, r.lease + tonumber(ARGV[4]))
if ARGV[5] then
	r.recovery_point = ARGV[5]
end
save(key, r, r.expires - now)
return 1
