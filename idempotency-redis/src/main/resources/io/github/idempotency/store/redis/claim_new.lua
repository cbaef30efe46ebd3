-- The first step of a batch claim: SET key value NX GET PX ttl for each key, in the order
-- of the keys, nothing decoded (the caller decides on what it finds, as for a single
-- claim, and sends the keys that need a conditional write to claim.lua).
-- KEYS[i] the record of the i-th key (one cluster hash slot for all of them)
-- ARGV[2i - 1] the new record of the i-th key (layout 1), ARGV[2i] its time to live in ms
-- Returns one reply per key: 0 when the key was free and now holds the new record, else
-- the value found, or { error } when the command failed (WRONGTYPE: a record of layout 0).
local replies = {}
for i = 1, #KEYS do
	local found = redis.pcall('SET', KEYS[i], ARGV[2 * i - 1], 'NX', 'GET', 'PX', ARGV[2 * i])
	if type(found) == 'table' then
		replies[i] = { found.err or 'ERR unexpected reply' }
	elseif found then
		replies[i] = found
	else
		replies[i] = 0
	end
end
return replies
