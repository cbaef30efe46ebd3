-- The hand-written batch completion, fenced per key: every key in one call.
-- KEYS[i] the i-th record; ARGV[1] retention in ms; ARGV[2i] 'P|' .. owner, ARGV[2i + 1] 'C|' .. response
-- one answer per key: 1 when the record was still ours and is now finished, else 0
local finished = {}
for i = 1, #KEYS do
	if redis.call('GET', KEYS[i]) == ARGV[2 * i] then
		redis.call('SET', KEYS[i], ARGV[2 * i + 1], 'PX', ARGV[1])
		finished[i] = 1
	else
		finished[i] = 0
	end
end
return finished
