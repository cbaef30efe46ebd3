-- KEYS[1] the record; ARGV[1] 'P|' .. owner; ARGV[2] lease in ms
-- nil when claimed now, else the record found ('P|owner' running, 'C|json' finished)
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
	return false
end
return redis.call('GET', KEYS[1])
