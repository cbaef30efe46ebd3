-- Finishes owned records (complete or fail), each key on its own.
-- KEYS[i] the record of the i-th key (one cluster hash slot for all of them)
-- ARGV[1] now (epoch milliseconds); then for each key: owner token, retention in
-- milliseconds, status (COMPLETED or FAILED), n, and n values: the response (none for a
-- void result) of a COMPLETED record, error_type and error_message (optional) of a FAILED one.
-- Returns one number per key: 1, or 0 when the record is not IN_PROGRESS and owned by its owner.
-- The record is kept for the retention from now (written in layout 1 whatever it was).
local now = tonumber(ARGV[1])
local finished = {}
local cursor = 2
for i = 1, #KEYS do
	local key = KEYS[i]
	local owner = ARGV[cursor]
	local retention = tonumber(ARGV[cursor + 1])
	local status = ARGV[cursor + 2]
	local count = tonumber(ARGV[cursor + 3])
	local first = cursor + 4
	cursor = first + count
	local r = load(key)
	if r == nil or r.status ~= 'P' or r.owner ~= owner or r.expires <= now then
		finished[i] = 0
	else
		r.updated = now
		r.expires = now + retention
		if status == 'COMPLETED' then
			r.status = 'C'
			r.response = (count > 0) and ARGV[first] or nil
		else
			r.status = 'F'
			r.error_type = (count > 0) and ARGV[first] or nil
			r.error_message = (count > 1) and ARGV[first + 1] or nil
		end
		save(key, r, retention)
		finished[i] = 1
	end
end
return finished
