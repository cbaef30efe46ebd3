-- Claims records: the decision of ClaimRules, on the server, for each key in one step, in
-- the order of the keys (a key named twice is acquired at most once: the second finds the
-- first's live claim). A single claim comes here only when SET NX GET could not decide
-- it: a record whose lease or retention ran out, or a record of layout 0.
-- KEYS[i] the record of the i-th key (one cluster hash slot for all of them)
-- ARGV[1] now (epoch milliseconds of the caller's clock); then for each key four
-- arguments: owner and fingerprint tokens ('' for no fingerprint), lease and retention in
-- milliseconds. A claimed record's lease_until is now + lease, its expires_at
-- lease_until + retention, its time to live lease + retention (relative, so the caller's
-- clock cannot drop the key early).
-- Returns one reply per key: { 'ACQUIRED' } for a new record (the caller knows every field
-- of it); else { outcome, record }: the record (layout 1) as found, or as a takeover left it.
-- A record of layout 0 stays as it is unless the claim changes it.
local now = tonumber(ARGV[1])

local function claim(key, owner, fingerprint, lease, retention)
	local lease_ms, retention_ms = tonumber(lease), tonumber(retention)
	local r = load(key)
	if r == nil or r.expires <= now then
		save(key, { status = 'P', attempt = 1, created = now, updated = now, expires = now + lease_ms + retention_ms,
			lease = now + lease_ms, owner = owner, fingerprint = fingerprint }, lease_ms + retention_ms)
		return { 'ACQUIRED' }
	end
	if fingerprint ~= '' and r.fingerprint ~= '' and r.fingerprint ~= fingerprint then
		return { 'MISMATCH', encode(r) }
	end
	if r.status == 'C' then
		return { 'DUPLICATE', encode(r) }
	end
	if r.status == 'F' then
		return { 'FAILED', encode(r) }
	end
	if r.lease > now then
		return { 'IN_PROGRESS', encode(r) }
	end
	-- takeover: next attempt, new owner; recovery point, fingerprint and created_at kept
	r.attempt = r.attempt + 1
	r.owner = owner
	r.lease = now + lease_ms
	r.updated = now
	r.expires = now + lease_ms + retention_ms
	r.response, r.error_type, r.error_message = nil, nil, nil
	if r.fingerprint == '' then
		r.fingerprint = fingerprint
	end
	return { 'ACQUIRED', save(key, r, lease_ms + retention_ms) }
end

local replies = {}
for i = 1, #KEYS do
	local first = 2 + 4 * (i - 1)
	replies[i] = claim(KEYS[i], ARGV[first], ARGV[first + 1], ARGV[first + 2], ARGV[first + 3])
end
return replies
