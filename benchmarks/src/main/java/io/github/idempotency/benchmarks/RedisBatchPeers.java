package io.github.idempotency.benchmarks;

import org.apache.camel.component.redis.processor.idempotent.SpringRedisIdempotentRepository;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import org.springframework.integration.redis.metadata.RedisMetadataStore;
import org.springframework.integration.selector.MetadataStoreSelector;

/**
 * The peers of {@link RedisBatchBenchmark}, each with the duplicates of
 * {@link RedisBatchBenchmark.Batch} delivered before the measurement.
 */
public final class RedisBatchPeers {

	private RedisBatchPeers() {
	}

	/**
	 * Spring Integration's idempotent receiver selector on a {@link RedisMetadataStore}.
	 */
	@State(Scope.Benchmark)
	public static class SpringIntegration {

		static final String HASH = "bench-si-batch-metadata";

		ServersState servers;

		MetadataStoreSelector selector;

		@Setup(Level.Trial)
		public void start(ServersState servers) {
			this.servers = servers;
			servers.redis.unlink(HASH);
			this.selector = new MetadataStoreSelector(PeerMessages::key,
					new RedisMetadataStore(servers.redisConnections, HASH));
			RedisBatchBenchmark.Batch.all().forEach((key) -> this.selector.accept(PeerMessages.of(key)));
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

		static final String SET = "bench-camel-batch-processed";

		ServersState servers;

		SpringRedisIdempotentRepository repository;

		@Setup(Level.Trial)
		public void start(ServersState servers) {
			this.servers = servers;
			servers.redis.unlink(SET);
			this.repository = SpringRedisIdempotentRepository.redisIdempotentRepository(servers.redis, SET);
			this.repository.start();
			RedisBatchBenchmark.Batch.all().forEach(this.repository::add);
		}

		@TearDown(Level.Trial)
		public void stop() {
			this.repository.stop();
			this.servers.redis.unlink(SET);
		}

	}

}
