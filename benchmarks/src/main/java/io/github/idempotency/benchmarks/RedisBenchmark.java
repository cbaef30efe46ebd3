package io.github.idempotency.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.apache.camel.component.redis.processor.idempotent.SpringRedisIdempotentRepository;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.integration.redis.metadata.RedisMetadataStore;
import org.springframework.integration.selector.MetadataStoreSelector;

/**
 * Redis (one node on loopback, Lettuce through Spring Data Redis, one shared connection).
 * <ul>
 * <li>{@code starter*}: the proxied {@code @Idempotent} method on the starter's redis store
 * (one compact string per record): the claim is {@code SET NX GET PX} and the completion a
 * script fenced by owner, one round trip each (first delivery: 2); a duplicate's claim is
 * the same {@code SET NX GET}, answered with the finished record and no script (1).</li>
 * <li>{@code bare*}: the protocol by hand on {@code StringRedisTemplate}: a claim script
 * ({@code SET NX PX}, or the record found: one round trip, also for a duplicate) and a
 * completion script fenced by owner ({@code GET} compare, {@code SET PX}: one round trip).
 * First delivery: 2 round trips; duplicate: 1.</li>
 * <li>{@code springIntegration*}: {@code MetadataStoreSelector.accept} on a
 * {@code RedisMetadataStore} (the idempotent receiver's check-and-mark): {@code HSETNX} in one
 * hash, then {@code HGET} when it was there. First: 1 round trip; duplicate: 2. No
 * in-progress state, no result, no expiry.</li>
 * <li>{@code camel*}: {@code SpringRedisIdempotentRepository.add} (+ {@code confirm}, a no-op),
 * what Camel's idempotent consumer calls per message: {@code SISMEMBER} then {@code SADD} in one
 * set. First: 2 round trips, check-then-insert (two racing deliveries can both pass);
 * duplicate: 1. No in-progress state, no result, no expiry.</li>
 * </ul>
 */
public class RedisBenchmark {

	@Benchmark
	public Receipt starterFirst(Starter state, Keys keys) {
		return state.handler.charge(keys.next());
	}

	@Benchmark
	public Receipt starterDuplicate(Starter state, DuplicateKeys keys) {
		return state.handler.charge(keys.next());
	}

	@Benchmark
	public Receipt bareFirst(Bare state, Keys keys) {
		String key = keys.next();
		String redisKey = Bare.PREFIX + key;
		String running = "P|" + Owners.next();
		String found = state.servers.redis.execute(state.claim, List.of(redisKey), running, Bare.LEASE_MS);
		if (found != null) {
			throw new IllegalStateException("Not a first delivery: " + found);
		}
		Receipt receipt = Receipt.of(key);
		Long completed = state.servers.redis.execute(state.complete, List.of(redisKey), running,
				"C|" + state.servers.writer.writeValueAsString(receipt), Bare.RETENTION_MS);
		if (completed == null || completed != 1L) {
			throw new IllegalStateException("Lost the claim of " + key);
		}
		return receipt;
	}

	@Benchmark
	public Receipt bareDuplicate(Bare state, DuplicateKeys keys) {
		String found = state.servers.redis.execute(state.claim, List.of(Bare.PREFIX + keys.next()),
				"P|" + Owners.next(), Bare.LEASE_MS);
		if (found == null || !found.startsWith("C|")) {
			throw new IllegalStateException("Not a duplicate: " + found);
		}
		return state.servers.reader.readValue(found.substring(2));
	}

	@Benchmark
	public boolean springIntegrationFirst(SpringIntegration state, Keys keys) {
		return Expect.answer(true, state.selector.accept(PeerMessages.of(keys.next())));
	}

	@Benchmark
	public boolean springIntegrationDuplicate(SpringIntegration state, DuplicateKeys keys) {
		return Expect.answer(false, state.selector.accept(PeerMessages.of(keys.next())));
	}

	@Benchmark
	public boolean camelFirst(Camel state, Keys keys) {
		String key = keys.next();
		return Expect.answer(true, state.repository.add(key) && state.repository.confirm(key));
	}

	@Benchmark
	public boolean camelDuplicate(Camel state, DuplicateKeys keys) {
		return Expect.answer(false, state.repository.add(keys.next()));
	}

	/**
	 * The starter with {@code idempotency.backend=redis}.
	 */
	@State(Scope.Benchmark)
	public static class Starter extends StarterState {

		@Override
		protected String backend() {
			return "redis";
		}

		@Override
		protected Map<String, Object> properties() {
			return StarterProperties.SERVERS;
		}

	}

	/**
	 * The two scripts of the hand-written protocol.
	 */
	@State(Scope.Benchmark)
	public static class Bare {

		static final String PREFIX = "bench-bare:{" + PaymentHandler.WORKFLOW + "}:";

		static final String LEASE_MS = "30000";

		static final String RETENTION_MS = "120000";

		ServersState servers;

		// read once: a RedisScript made from a Resource checks the resource for changes on every call
		final RedisScript<String> claim = RedisScript.of(script("claim.lua"), String.class);

		final RedisScript<Long> complete = RedisScript.of(script("complete.lua"), Long.class);

		@Setup(Level.Trial)
		public void finishDuplicates(ServersState servers) {
			this.servers = servers;
			for (String key : DuplicateKeys.all()) {
				servers.redis.opsForValue()
					.set(PREFIX + key, "C|" + servers.writer.writeValueAsString(Receipt.of(key)),
							Duration.ofMillis(Long.parseLong(RETENTION_MS)));
			}
		}

	}

	static String script(String name) {
		try {
			return new ClassPathResource("bench/" + name).getContentAsString(StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Spring Integration's idempotent receiver selector on a {@link RedisMetadataStore}.
	 */
	@State(Scope.Benchmark)
	public static class SpringIntegration {

		static final String HASH = "bench-si-metadata";

		ServersState servers;

		MetadataStoreSelector selector;

		@Setup(Level.Trial)
		public void start(ServersState servers) {
			this.servers = servers;
			servers.redis.unlink(HASH);
			this.selector = new MetadataStoreSelector(PeerMessages::key,
					new RedisMetadataStore(servers.redisConnections, HASH));
			for (String key : DuplicateKeys.all()) {
				this.selector.accept(PeerMessages.of(key));
			}
		}

		@TearDown(Level.Trial)
		public void clear() {
			this.servers.redis.unlink(HASH);
		}

	}

	/**
	 * Camel's Redis idempotent repository on the same connection factory.
	 */
	@State(Scope.Benchmark)
	public static class Camel {

		static final String SET = "bench-camel-processed";

		ServersState servers;

		SpringRedisIdempotentRepository repository;

		@Setup(Level.Trial)
		public void start(ServersState servers) {
			this.servers = servers;
			servers.redis.unlink(SET);
			this.repository = SpringRedisIdempotentRepository.redisIdempotentRepository(servers.redis, SET);
			this.repository.start();
			for (String key : DuplicateKeys.all()) {
				this.repository.add(key);
			}
		}

		@TearDown(Level.Trial)
		public void stop() {
			this.repository.stop();
			this.servers.redis.unlink(SET);
		}

	}

}
