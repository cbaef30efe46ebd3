-- Finishes owned records (complete or fail), each key on its own.
-- KEYS[i] the record of the i-th key (one cluster hash slot for all of them)
-- ARGV[1] now (epoch milliseconds); then four arguments per key: owner token, retention in
-- milliseconds, the value the claim expects the record to have ('' when it does not know
-- it), and the finished record (layout 1) as the claim would write it.
-- When the record is exactly the expected value (the claim's own in-progress record, not
-- over at now: the caller checked), that finished record is written as it is: one GET and
-- one SET, nothing decoded. Otherwise the record is read, and finished only when it is
-- IN_PROGRESS, owned by the owner and not over, taking the status, response, error type and
-- error message of the finished record and keeping its own other fields.
-- Returns one number per key: 1, or 0 when the record is not IN_PROGRESS and owned by its owner.
-- The record is kept for the retention from now (written in layout 1 whatever it was).
local now = tonumber(ARGV[1])
local finished = {}
for i = 1, #KEYS do
	local key = KEYS[i]
	local first = 2 + 4 * (i - 1)
	local owner, retention, expected, value = ARGV[first], tonumber(ARGV[first + 1]), ARGV[first + 2],
		ARGV[first + 3]
	local current = (expected ~= '') and redis.pcall('GET', key) or nil
	if current == expected then
		redis.call('SET', key, value, 'PX', string.format('%d', retention))
		finished[i] = 1
	else
		local r = load(key)
		if r == nil or r.status ~= 'P' or r.owner ~= owner or r.expires <= now then
			finished[i] = 0
		else
			local f = decode(value)
			r.status = f.status
			r.response, r.error_type, r.error_message = f.response, f.error_type, f.error_message
			r.updated = now
			r.expires = now + retention
			save(key, r, retention)
			finished[i] = 1
		end
	end
end
return finished
