package io.github.idempotency.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.lettuce.core.RedisFuture;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import io.github.idempotency.IdempotencyTemplate;
import io.github.idempotency.IdempotentRequest;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A batch of messages at a time (the batch sizes are the {@code batch} parameter), on
 * Redis (one node on loopback, one shared Lettuce connection); JMH counts batches, a
 * message costs the batch's time divided by its size.
 * <ul>
 * <li>{@code redisStarter*} and {@code hybridStarter*}: {@link IdempotencyTemplate#executeAll}
 * on the starter's redis and hybrid stores (the engine claims the batch with one
 * {@code claimAll}: one script call on the redis store; on the hybrid one pipelined cache
 * read, then PostgreSQL for the misses).</li>
 * <li>{@code bare*}: the least a batch needs, by hand on {@code StringRedisTemplate}
 * ({@link RedisBatchBare}): one script runs {@code SET key value NX GET PX lease} for every
 * key (the claim, or the record found), then, for a first delivery, one script completes
 * every key fenced by owner ({@code GET}, compare, {@code SET PX}: Redis 7.0 has no
 * compare-and-set command, so a fenced write is a script). First delivery: 2 round trips a batch; duplicate: 1.</li>
 * <li>{@code barePipelined*}: the same claim as one {@code SET NX GET PX} command per key
 * on the shared Lettuce connection, all sent before any answer is awaited (Lettuce flushes
 * each command on its own: slower than the one script on this client), then the same
 * completion script.</li>
 * <li>{@code springIntegration*} and {@code camel*}: the peers looping over the batch with
 * their per-message API, as in {@link RedisBenchmark} ({@link RedisBatchPeers}).</li>
 * </ul>
 */
public class RedisBatchBenchmark {

	static final String WORKFLOW = "bench-batch";

	@Benchmark
	public List<Receipt> redisStarterFirst(RedisStarter state, Batch batch, Keys keys) {
		return state.charge(batch.first(keys));
	}

	@Benchmark
	public List<Receipt> redisStarterDuplicate(RedisStarter state, Batch batch) {
		return state.charge(batch.duplicates());
	}

	@Benchmark
	public List<Receipt> hybridStarterFirst(HybridStarter state, Batch batch, Keys keys) {
		return state.charge(batch.first(keys));
	}

	@Benchmark
	public List<Receipt> hybridStarterDuplicate(HybridStarter state, Batch batch) {
		return state.charge(batch.duplicates());
	}

	@Benchmark
	public List<Receipt> bareFirst(RedisBatchBare state, Batch batch, Keys keys) {
		List<String> batchKeys = batch.first(keys);
		List<String> redisKeys = new ArrayList<>(batchKeys.size());
		List<String> owners = new ArrayList<>(batchKeys.size());
		List<String> claimArgs = new ArrayList<>(batchKeys.size() + 1);
		claimArgs.add(RedisBenchmark.Bare.LEASE_MS);
		for (String key : batchKeys) {
			redisKeys.add(RedisBatchBare.PREFIX + key);
			String running = "P|" + Owners.next();
			owners.add(running);
			claimArgs.add(running);
		}
		List<?> found = state.servers.redis.execute(state.claim, redisKeys, claimArgs.toArray());
		List<Receipt> receipts = new ArrayList<>(batchKeys.size());
		List<String> completeArgs = new ArrayList<>(2 * batchKeys.size() + 1);
		completeArgs.add(RedisBenchmark.Bare.RETENTION_MS);
		for (int i = 0; i < batchKeys.size(); i++) {
			if (!Long.valueOf(0).equals(found.get(i))) {
				throw new IllegalStateException("Not a first delivery: " + found.get(i));
			}
			Receipt receipt = Receipt.of(batchKeys.get(i));
			receipts.add(receipt);
			completeArgs.add(owners.get(i));
			completeArgs.add("C|" + state.servers.writer.writeValueAsString(receipt));
		}
		List<?> completed = state.servers.redis.execute(state.complete, redisKeys, completeArgs.toArray());
		if (completed.contains(0L)) {
			throw new IllegalStateException("Lost a claim of the batch");
		}
		return receipts;
	}

	@Benchmark
	public List<Receipt> bareDuplicate(RedisBatchBare state, Batch batch) {
		List<String> batchKeys = batch.duplicates();
		List<String> redisKeys = new ArrayList<>(batchKeys.size());
		List<String> claimArgs = new ArrayList<>(batchKeys.size() + 1);
		claimArgs.add(RedisBenchmark.Bare.LEASE_MS);
		for (String key : batchKeys) {
			redisKeys.add(RedisBatchBare.PREFIX + key);
			claimArgs.add("P|" + Owners.next());
		}
		List<?> found = state.servers.redis.execute(state.claim, redisKeys, claimArgs.toArray());
		List<Receipt> receipts = new ArrayList<>(batchKeys.size());
		for (Object record : found) {
			if (!(record instanceof String text) || !text.startsWith("C|")) {
				throw new IllegalStateException("Not a duplicate: " + record);
			}
			receipts.add(state.servers.reader.readValue(text.substring(2)));
		}
		return receipts;
	}

	@Benchmark
	public List<Receipt> barePipelinedFirst(RedisBatchBare state, Batch batch, Keys keys) {
		List<String> batchKeys = batch.first(keys);
		int size = batchKeys.size();
		List<String> redisKeys = new ArrayList<>(size);
		List<String> owners = new ArrayList<>(size);
		List<RedisFuture<byte[]>> claims = new ArrayList<>(size);
		for (String key : batchKeys) {
			String redisKey = RedisBatchBare.PREFIX + key;
			String running = "P|" + Owners.next();
			redisKeys.add(redisKey);
			owners.add(running);
			claims.add(state.commands.setGet(RedisBatchBare.bytes(redisKey), RedisBatchBare.bytes(running),
					RedisBatchBare.CLAIM));
		}
		List<Receipt> receipts = new ArrayList<>(size);
		List<String> completeArgs = new ArrayList<>(2 * size + 1);
		completeArgs.add(RedisBenchmark.Bare.RETENTION_MS);
		for (int i = 0; i < size; i++) {
			byte[] found = RedisBatchBare.await(claims.get(i));
			if (found != null) {
				throw new IllegalStateException("Not a first delivery: " + new String(found, StandardCharsets.UTF_8));
			}
			Receipt receipt = Receipt.of(batchKeys.get(i));
			receipts.add(receipt);
			completeArgs.add(owners.get(i));
			completeArgs.add("C|" + state.servers.writer.writeValueAsString(receipt));
		}
		List<?> completed = state.servers.redis.execute(state.complete, redisKeys, completeArgs.toArray());
		if (completed.contains(0L)) {
			throw new IllegalStateException("Lost a claim of the batch");
		}
		return receipts;
	}

	@Benchmark
	public List<Receipt> barePipelinedDuplicate(RedisBatchBare state, Batch batch) {
		List<String> batchKeys = batch.duplicates();
		List<RedisFuture<byte[]>> claims = new ArrayList<>(batchKeys.size());
		for (String key : batchKeys) {
			claims.add(state.commands.setGet(RedisBatchBare.bytes(RedisBatchBare.PREFIX + key),
					RedisBatchBare.bytes("P|" + Owners.next()), RedisBatchBare.CLAIM));
		}
		List<Receipt> receipts = new ArrayList<>(batchKeys.size());
		for (RedisFuture<byte[]> claim : claims) {
			byte[] found = RedisBatchBare.await(claim);
			String text = (found != null) ? new String(found, StandardCharsets.UTF_8) : null;
			if (text == null || !text.startsWith("C|")) {
				throw new IllegalStateException("Not a duplicate: " + text);
			}
			receipts.add(state.servers.reader.readValue(text.substring(2)));
		}
		return receipts;
	}

	@Benchmark
	public int springIntegrationFirst(RedisBatchPeers.SpringIntegration state, Batch batch, Keys keys) {
		int accepted = 0;
		for (String key : batch.first(keys)) {
			accepted += Expect.answer(true, state.selector.accept(PeerMessages.of(key))) ? 1 : 0;
		}
		return accepted;
	}

	@Benchmark
	public int springIntegrationDuplicate(RedisBatchPeers.SpringIntegration state, Batch batch) {
		int rejected = 0;
		for (String key : batch.duplicates()) {
			rejected += Expect.answer(false, state.selector.accept(PeerMessages.of(key))) ? 0 : 1;
		}
		return rejected;
	}

	@Benchmark
	public int camelFirst(RedisBatchPeers.Camel state, Batch batch, Keys keys) {
		int added = 0;
		for (String key : batch.first(keys)) {
			added += Expect.answer(true, state.repository.add(key) && state.repository.confirm(key)) ? 1 : 0;
		}
		return added;
	}

	@Benchmark
	public int camelDuplicate(RedisBatchPeers.Camel state, Batch batch) {
		int rejected = 0;
		for (String key : batch.duplicates()) {
			rejected += Expect.answer(false, state.repository.add(key)) ? 0 : 1;
		}
		return rejected;
	}

	/**
	 * Deletes the keys an earlier trial left ({@code pattern}), so that every trial starts
	 * on the same keyspace: otherwise the first deliveries of earlier trials (100 keys a
	 * batch, kept two minutes) grow it and then expire on the server's core while this one
	 * runs, and a trial's score depends on what ran before it.
	 */
	static void clear(StringRedisTemplate redis, String pattern) {
		List<String> keys = new ArrayList<>(1000);
		try (Cursor<String> cursor = redis.scan(ScanOptions.scanOptions().match(pattern).count(10_000).build())) {
			while (cursor.hasNext()) {
				keys.add(cursor.next());
				if (keys.size() == 1000) {
					redis.unlink(keys);
					keys.clear();
				}
			}
		}
		if (!keys.isEmpty()) {
			redis.unlink(keys);
		}
	}

	/**
	 * The batch size, and the keys of its batches: fresh ones for first deliveries, and
	 * {@link #DUPLICATES} keys finished before the measurement, taken a batch at a time.
	 */
	@State(Scope.Benchmark)
	public static class Batch {

		static final int DUPLICATES = 1024;

		private static final List<String> DUPLICATE_KEYS = duplicateKeys();

		@Param({ "1", "10", "100", "500" })
		public int size;

		private int next;

		List<String> first(Keys keys) {
			List<String> batch = new ArrayList<>(this.size);
			for (int i = 0; i < this.size; i++) {
				batch.add(keys.next());
			}
			return batch;
		}

		List<String> duplicates() {
			List<String> batch = new ArrayList<>(this.size);
			for (int i = 0; i < this.size; i++) {
				batch.add(DUPLICATE_KEYS.get(this.next));
				this.next = (this.next + 1) % DUPLICATES;
			}
			return batch;
		}

		static List<String> all() {
			return DUPLICATE_KEYS;
		}

		private static List<String> duplicateKeys() {
			String run = UUID.randomUUID().toString().substring(0, 13);
			List<String> keys = new ArrayList<>(DUPLICATES);
			for (int i = 0; i < DUPLICATES; i++) {
				keys.add("bdup-" + run + "-" + i);
			}
			return List.copyOf(keys);
		}

	}

	/**
	 * The starter's {@link IdempotencyTemplate} on one backend, the duplicates delivered
	 * once before the measurement.
	 */
	public abstract static class TemplateState extends StarterState {

		IdempotencyTemplate template;

		@Override
		protected Map<String, Object> properties() {
			return StarterProperties.SERVERS;
		}

		// the set-up of StarterState (JMH calls it once, this override included)
		@Override
		public void start() {
			super.start();
			this.template = this.context.getBean(IdempotencyTemplate.class);
			clear(this.context.getBean(StringRedisTemplate.class),
					StarterProperties.KEY_PREFIX + ":{" + WORKFLOW.length() + ":" + WORKFLOW + ":*");
			List<String> keys = Batch.all();
			for (int i = 0; i < keys.size(); i += 256) {
				charge(keys.subList(i, Math.min(keys.size(), i + 256)));
			}
		}

		List<Receipt> charge(List<String> keys) {
			List<IdempotentRequest> requests = new ArrayList<>(keys.size());
			for (String key : keys) {
				requests.add(IdempotentRequest.of(WORKFLOW, key).withRetention(Duration.ofMinutes(2)));
			}
			return this.template.executeAll(requests, Receipt.class, (request) -> Receipt.of((String) request.key()));
		}

	}

	/**
	 * The starter with {@code idempotency.backend=redis}.
	 */
	@State(Scope.Benchmark)
	public static class RedisStarter extends TemplateState {

		@Override
		protected String backend() {
			return "redis";
		}

	}

	/**
	 * The starter with {@code idempotency.backend=hybrid}.
	 */
	@State(Scope.Benchmark)
	public static class HybridStarter extends TemplateState {

		@Override
		protected String backend() {
			return "hybrid";
		}

	}
}
