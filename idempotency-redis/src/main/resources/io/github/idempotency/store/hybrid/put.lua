-- Replaces one cached record.
-- KEYS[1] the cache hash
-- ARGV[1] time to live in milliseconds, ARGV[2...] field, value, ...
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
