-- The hand-written batch claim: SET NX GET PX for every key in one call.
-- KEYS[i] the i-th record; ARGV[1] lease in ms; ARGV[1 + i] 'P|' .. owner of the i-th key
-- one answer per key: 0 when claimed now, else the record found ('P|owner' running, 'C|json' finished)
local found = {}
for i = 1, #KEYS do
	found[i] = redis.call('SET', KEYS[i], ARGV[1 + i], 'NX', 'GET', 'PX', ARGV[1]) or 0
end
return found
