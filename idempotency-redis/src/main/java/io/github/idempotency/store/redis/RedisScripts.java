package io.github.idempotency.store.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The store's Lua scripts (resources next to this class), each a Spring
 * {@link RedisScript} read once. Those that read or write a record start with
 * {@code record.lua}, the record's layout in Lua ({@link CompactRecord} in Java); those
 * that only move values ({@code claim_new.lua}, {@code read.lua}) do not. A script of one
 * key runs through Spring Data Redis ({@code EVALSHA}, {@code EVAL} on {@code NOSCRIPT});
 * a script of a batch through {@link SlotGroupedScript}.
 */
final class RedisScripts {

	/** Claims keys atomically: a takeover, a new record over an expired one, layout 0. */
	static final RedisScript<List> CLAIM = withRecord("claim.lua", List.class);

	/** Completes or fails a claim, fenced by its owner. */
	static final RedisScript<List> FINISH = withRecord("finish.lua", List.class);

	/** Gives a claim back, fenced by its owner. */
	static final RedisScript<Long> RELEASE = withRecord("release.lua", Long.class);

	/** Renews a claim's lease, and saves its recovery point when one is given. */
	static final RedisScript<Long> RENEW = withRecord("renew.lua", Long.class);

	/** {@code SET key record NX GET PX ttl} for every key of a batch, nothing decoded. */
	static final RedisScript<List> CLAIM_NEW = plain("claim_new.lua");

	/** {@code MGET} of the keys of a batch that reads first. */
	static final RedisScript<List> READ = plain("read.lua");

	/** {@link #CLAIM} on the keys of a batch. */
	static final SlotGroupedScript CLAIM_ALL = new SlotGroupedScript(CLAIM);

	/** {@link #CLAIM_NEW} on the keys of a batch. */
	static final SlotGroupedScript CLAIM_NEW_ALL = new SlotGroupedScript(CLAIM_NEW);

	/** {@link #READ} on the keys of a batch. */
	static final SlotGroupedScript READ_ALL = new SlotGroupedScript(READ);

	/** {@link #FINISH} on the keys of a batch. */
	static final SlotGroupedScript FINISH_ALL = new SlotGroupedScript(FINISH);

	private RedisScripts() {
	}

	/**
	 * A script that reads records: {@code record.lua}, then the script itself. Read once (a
	 * {@code RedisScript} made from a {@code Resource} checks it for changes on every call).
	 */
	private static <T> RedisScript<T> withRecord(String name, Class<T> resultType) {
		return RedisScript.of(read("record.lua") + "\n" + read(name), resultType);
	}

	/** A script that does not read records: without {@code record.lua}. */
	private static RedisScript<List> plain(String name) {
		return RedisScript.of(read(name), List.class);
	}

	private static String read(String name) {
		try {
			return new ClassPathResource(name, RedisScripts.class).getContentAsString(StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read the Redis script " + name, ex);
		}
	}

}
