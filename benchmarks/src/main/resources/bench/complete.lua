-- KEYS[1] the record; ARGV[1] 'P|' .. owner; ARGV[2] 'C|' .. response; ARGV[3] retention in ms
-- 1 when the record was still ours and is now finished, else 0
if redis.call('GET', KEYS[1]) == ARGV[1] then
	redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
	return 1
end
return 0
