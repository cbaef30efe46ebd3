-- Removes an owned record, so that the next delivery runs the operation again.
-- KEYS[1] the record
-- ARGV[1] owner token, ARGV[2] now (epoch milliseconds)
-- Returns 1, or 0 when the record is not IN_PROGRESS and owned by ARGV[1].
local key = KEYS[1]
local r = load(key)
if r == nil or r.status ~= 'P' or r.owner ~= ARGV[1] or r.expires <= tonumber(ARGV[2]) then
	return 0
end
redis.call('DEL', key)
return 1
