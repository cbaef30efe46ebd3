-- The record of one key, in both layouts (prepended to every script of this store).
-- Layout 1 is one string: see CompactRecord.java for the bytes. Layout 0, before it, is a
-- hash of one field per column; load() reads both, save() writes layout 1 (SET replaces a
-- hash, so a record of layout 0 is migrated when a script changes it).
-- A record here is a table: status ('P', 'C' or 'F'), attempt, created, updated, expires,
-- lease (epoch milliseconds), owner and fingerprint (tokens: '' for no fingerprint),
-- recovery_point, error_type, error_message, response (nil when absent).

local function varint(n)
	local bytes = {}
	repeat
		local b = n % 128
		n = (n - b) / 128
		if n > 0 then
			b = b + 128
		end
		bytes[#bytes + 1] = string.char(b)
	until n == 0
	return table.concat(bytes)
end

local function zigzag(n)
	if n >= 0 then
		return varint(2 * n)
	end
	return varint(-2 * n - 1)
end

local function read_varint(s, pos)
	local value, scale = 0, 1
	while true do
		local b = string.byte(s, pos)
		pos = pos + 1
		if b < 128 then
			return value + b * scale, pos
		end
		value = value + (b - 128) * scale
		scale = scale * 128
	end
end

local function read_zigzag(s, pos)
	local n
	n, pos = read_varint(s, pos)
	if n % 2 == 0 then
		return n / 2, pos
	end
	return -(n + 1) / 2, pos
end

-- the field at pos when bit of flags is set (a varint length and the bytes), else nil
local function read_field(s, pos, flags, bit)
	if math.floor(flags / bit) % 2 == 0 then
		return nil, pos
	end
	local length
	length, pos = read_varint(s, pos)
	return string.sub(s, pos, pos + length - 1), pos + length
end

local function field(value)
	if value == nil then
		return ''
	end
	return varint(#value) .. value
end

local function present(value, bit)
	if value == nil then
		return 0
	end
	return bit
end

local status_bits = { P = 0, C = 1, F = 2 }
local status_of_bits = { [0] = 'P', [1] = 'C', [2] = 'F' }

local function hex_bytes(hex)
	return (string.gsub(hex, '..', function(pair)
		return string.char(tonumber(pair, 16))
	end))
end

-- the token of an owner or fingerprint text, byte for byte what RecordToken.of makes
local function token(value)
	if #value > 0 and #value % 2 == 0 and not string.find(value, '[^0-9a-f]') then
		return 'x' .. hex_bytes(value)
	end
	local a, b, c, d, e, counter = string.match(value,
		'^(%x%x%x%x%x%x%x%x)%-(%x%x%x%x)%-(%x%x%x%x)%-(%x%x%x%x)%-(%x%x%x%x%x%x%x%x%x%x%x%x)%-(%d+)$')
	if a and not string.find(a .. b .. c .. d .. e, '[A-F]') and #counter <= 15
			and (counter == '0' or string.sub(counter, 1, 1) ~= '0') then
		return 'u' .. hex_bytes(a .. b .. c .. d .. e) .. varint(tonumber(counter))
	end
	return 't' .. value
end

local function encode(r)
	local fingerprint = (r.fingerprint ~= '') and r.fingerprint or nil
	local flags = status_bits[r.status] + present(fingerprint, 4) + present(r.recovery_point, 8)
		+ present(r.error_type, 16) + present(r.error_message, 32) + present(r.response, 64)
	return table.concat({ '\1', string.char(flags), varint(r.attempt), varint(r.created),
		zigzag(r.updated - r.created), zigzag(r.expires - r.updated), zigzag(r.lease - r.created), field(r.owner),
		field(fingerprint), field(r.recovery_point), field(r.error_type), field(r.error_message), field(r.response) })
end

local function decode(s)
	if string.byte(s, 1) ~= 1 then
		error({ err = 'ERR idempotency record of unknown layout ' .. string.byte(s, 1) })
	end
	local flags = string.byte(s, 2)
	local r = { status = status_of_bits[flags % 4] }
	local pos = 3
	local delta
	r.attempt, pos = read_varint(s, pos)
	r.created, pos = read_varint(s, pos)
	delta, pos = read_zigzag(s, pos)
	r.updated = r.created + delta
	delta, pos = read_zigzag(s, pos)
	r.expires = r.updated + delta
	delta, pos = read_zigzag(s, pos)
	r.lease = r.created + delta
	r.owner, pos = read_field(s, pos, 1, 1)
	r.fingerprint, pos = read_field(s, pos, flags, 4)
	r.recovery_point, pos = read_field(s, pos, flags, 8)
	r.error_type, pos = read_field(s, pos, flags, 16)
	r.error_message, pos = read_field(s, pos, flags, 32)
	r.response, pos = read_field(s, pos, flags, 64)
	r.fingerprint = r.fingerprint or ''
	return r
end

local statuses = { IN_PROGRESS = 'P', COMPLETED = 'C', FAILED = 'F' }

-- a record of layout 0 (a hash), read until 1.0: see LegacyFallbacks.java
local function decode_hash(key)
	local found = redis.call('HGETALL', key)
	local h = {}
	for i = 1, #found, 2 do
		h[found[i]] = found[i + 1]
	end
	return { status = statuses[h.status], attempt = tonumber(h.attempt), created = tonumber(h.created_at),
		updated = tonumber(h.updated_at), expires = tonumber(h.expires_at), lease = tonumber(h.lease_until),
		owner = token(h.owner), fingerprint = h.fingerprint and token(h.fingerprint) or '',
		recovery_point = h.recovery_point, error_type = h.error_type, error_message = h.error_message,
		response = h.response }
end

-- the record at key, of either layout, or nil; and its value when it is of layout 1
local function load(key)
	local value = redis.pcall('GET', key)
	if not value then
		return nil
	end
	if type(value) == 'table' then
		if redis.call('TYPE', key).ok == 'hash' then
			return decode_hash(key)
		end
		error(value)
	end
	return decode(value), value
end

-- writes r with a time to live of ttl milliseconds (relative, never an absolute time); the
-- value written
local function save(key, r, ttl)
	local value = encode(r)
	redis.call('SET', key, value, 'PX', string.format('%d', ttl))
	return value
end

