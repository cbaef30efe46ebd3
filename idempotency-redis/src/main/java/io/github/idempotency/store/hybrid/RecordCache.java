package io.github.idempotency.store.hybrid;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordId;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The hybrid store's cache of finished records: one hash per record
 * ({@link CachedRecords}), written by {@code put.lua} for {@code cacheTtl} but never beyond
 * the record's own expiry, read one key at a time or a batch pipelined
 * ({@link CachePipeline}).
 * <p>
 * When Redis cannot be reached, a read answers nothing and a write is skipped. After an
 * error the cache is left alone for one second, then tried again, so an outage costs one
 * Redis timeout per second rather than one per call. The first error of an outage is
 * logged as a WARN, the return as an INFO; {@link #errors()} counts the errors.
 * {@link #delete} is the exception: it fails while Redis cannot be reached.
 */
final class RecordCache {

	private static final Log logger = LogFactory.getLog(HybridIdempotencyStore.class);

	private static final RedisScript<Long> PUT = putScript();

	private static final long RETRY_INTERVAL = TimeUnit.SECONDS.toNanos(1);

	private final StringRedisTemplate redis;

	private final CachePipeline pipeline;

	private final String keyPrefix;

	private final Duration cacheTtl;

	private final Clock clock;

	private final AtomicBoolean cacheDown = new AtomicBoolean();

	private final AtomicLong cacheErrors = new AtomicLong();

	private volatile long retryAt;

	RecordCache(RedisConnectionFactory connectionFactory, String keyPrefix, Duration cacheTtl, Clock clock) {
		this.redis = new StringRedisTemplate(connectionFactory);
		this.pipeline = new CachePipeline(connectionFactory);
		this.keyPrefix = keyPrefix;
		this.cacheTtl = cacheTtl;
		this.clock = clock;
	}

	/**
	 * The cache key of a record.
	 * @param id the record
	 * @return {@code <prefix>:cache:{<workflow length>:<workflow>:<key>}}
	 */
	String key(RecordId id) {
		return this.keyPrefix + ":cache:{" + id.workflow().length() + ":" + id.workflow() + ":" + id.key() + "}";
	}

	/** How many cache operations failed. */
	long errors() {
		return this.cacheErrors.get();
	}

	/** The cached record, or {@code null} (also while the cache cannot be reached). */
	@Nullable IdempotencyRecord read(RecordId id) {
		Map<String, String> fields = onCache(() -> {
			Map<String, String> read = new HashMap<>();
			this.redis.<String, String>opsForHash().entries(key(id)).forEach(read::put);
			return read;
		});
		return (fields != null && !fields.isEmpty()) ? CachedRecords.fromFields(id, fields) : null;
	}

	/**
	 * The cached record of each request, read in one pipelined round trip.
	 */
	List<@Nullable IdempotencyRecord> readAll(List<ClaimRequest> requests) {
		List<String> keys = new ArrayList<>(requests.size());
		requests.forEach((request) -> keys.add(key(request.id())));
		List<Map<String, String>> read = onCache(() -> this.pipeline.readAll(keys));
		List<@Nullable IdempotencyRecord> cached = new ArrayList<>(requests.size());
		for (int i = 0; i < requests.size(); i++) {
			if (read == null) {
				// not a Lettuce connection, or the cache is down (then nothing is read)
				cached.add(this.cacheDown.get() ? null : read(requests.get(i).id()));
			}
			else {
				Map<String, String> fields = read.get(i);
				cached.add(fields.isEmpty() ? null : CachedRecords.fromFields(requests.get(i).id(), fields));
			}
		}
		return cached;
	}

	/** Caches a finished record. */
	void put(IdempotencyRecord record) {
		List<String> args = putArguments(record);
		if (args != null) {
			onCache(() -> this.redis.execute(PUT, List.of(key(record.id())), args.toArray()));
		}
	}

	/**
	 * Caches the records in one pipelined round trip.
	 */
	void putAll(List<IdempotencyRecord> records) {
		if (records.size() <= 1) {
			records.forEach(this::put);
			return;
		}
		List<String> keys = new ArrayList<>(records.size());
		List<List<String>> arguments = new ArrayList<>(records.size());
		for (IdempotencyRecord record : records) {
			List<String> args = putArguments(record);
			if (args != null) {
				keys.add(key(record.id()));
				arguments.add(args);
			}
		}
		Boolean pipelined = onCache(() -> this.pipeline.runAll(PUT, keys, arguments));
		if (Boolean.FALSE.equals(pipelined)) {
			records.forEach(this::put);
		}
	}

	/**
	 * Caches records the store finished once the current transaction (if any) commits: a
	 * rolled-back record is never cached.
	 */
	void putOnceCommitted(List<IdempotencyRecord> records) {
		if (records.isEmpty()) {
			return;
		}
		if (TransactionSynchronizationManager.isSynchronizationActive()) {
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
				@Override
				public void afterCommit() {
					putAll(records);
				}
			});
		}
		else {
			putAll(records);
		}
	}

	/** Removes a record from the cache, unless the cache cannot be reached. */
	void evict(RecordId id) {
		onCache(() -> this.redis.delete(key(id)));
	}

	/**
	 * Removes a record from the cache.
	 * @throws RuntimeException the Redis error when the cache cannot be reached
	 */
	void delete(RecordId id) {
		this.redis.delete(key(id));
	}

	/**
	 * The arguments of {@code put.lua} for a record.
	 * @return the arguments, or {@code null} when the record expires before it could be
	 * read from the cache
	 */
	private @Nullable List<String> putArguments(IdempotencyRecord record) {
		long ttl = Math.min(this.cacheTtl.toMillis(),
				record.expiresAt().toEpochMilli() - this.clock.instant().toEpochMilli());
		if (ttl <= 0) {
			return null;
		}
		List<String> fields = CachedRecords.toFields(record);
		List<String> args = new ArrayList<>(fields.size() + 1);
		args.add(String.valueOf(ttl));
		args.addAll(fields);
		return args;
	}

	private <T> @Nullable T onCache(Supplier<T> operation) {
		if (this.cacheDown.get() && System.nanoTime() - this.retryAt < 0) {
			return null;
		}
		try {
			T result = operation.get();
			if (this.cacheDown.compareAndSet(true, false)) {
				logger.info("The Redis cache of the idempotency store answers again");
			}
			return result;
		}
		catch (RuntimeException ex) {
			this.cacheErrors.incrementAndGet();
			this.retryAt = System.nanoTime() + RETRY_INTERVAL;
			if (this.cacheDown.compareAndSet(false, true)) {
				logger.warn("The Redis cache of the idempotency store cannot be reached: answering from the source "
						+ "of truth alone until it returns", ex);
			}
			return null;
		}
	}

	/**
	 * The cache's write script, read once: a {@code RedisScript} made from a
	 * {@code Resource} checks the resource for changes on every call.
	 */
	private static RedisScript<Long> putScript() {
		try {
			return RedisScript.of(new ClassPathResource("put.lua", RecordCache.class)
				.getContentAsString(StandardCharsets.UTF_8), Long.class);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read the Redis script put.lua", ex);
		}
	}

}
