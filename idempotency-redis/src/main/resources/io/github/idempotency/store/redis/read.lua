-- Reads records without changing them: the first step of a batch claim of a workflow that
-- reads first (ReadFirst: its recent claims mostly answered from records, duplicates), so
-- that those are answered by this read alone, with nothing written and nothing encoded.
-- KEYS[i] the record of the i-th key (one cluster hash slot for all of them)
-- Returns one reply per key: the value (layout 1), or false (nil to the caller) when the key
-- is absent or holds no string (a record of layout 0: the claim that follows reads it).
local values = {}
for first = 1, #KEYS, 1000 do
	local found = redis.call('MGET', unpack(KEYS, first, math.min(first + 999, #KEYS)))
	for i = 1, #found do
		values[first + i - 1] = found[i]
	end
end
return values
