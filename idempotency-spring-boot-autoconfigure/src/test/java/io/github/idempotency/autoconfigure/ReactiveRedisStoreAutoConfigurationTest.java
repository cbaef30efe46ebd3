package io.github.idempotency.autoconfigure;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.UUID;

import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ReactiveClaimResult;
import io.github.idempotency.store.ReactiveIdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;
import io.github.idempotency.store.redis.ReactiveRedisIdempotencyStore;
import io.github.idempotency.store.redis.RedisIdempotencyStore;
import io.github.idempotency.testservers.TestServers;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One fact of the reactive redis store's auto-configuration per test.
 */
class ReactiveRedisStoreAutoConfigurationTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotencyAutoConfiguration.class));

	/** As Spring Boot defines it: a Lettuce factory, both blocking and reactive. */
	private final ApplicationContextRunner withLettuce = this.runner.withBean(LettuceConnectionFactory.class,
			ReactiveRedisStoreAutoConfigurationTest::connectionFactory);

	@Test
	void withLettuceTheRedisStoreHasAReactiveVariantOnTheSameKeys() {
		this.withLettuce.withPropertyValues("idempotency.redis.key-prefix=reactive-autoconfigure").run((context) -> {
			assertThat(context).hasSingleBean(RedisIdempotencyStore.class)
				.hasSingleBean(ReactiveRedisIdempotencyStore.class);
			ReactiveIdempotencyStore reactive = context.getBean(ReactiveIdempotencyStore.class);
			RecordId id = new RecordId("reactive-autoconfigure", UUID.randomUUID().toString());
			ReactiveClaimResult claimed = reactive
				.claim(new ClaimRequest(id, "owner", null, Duration.ofSeconds(30), Duration.ofMinutes(1)))
				.block();
			assertThat(claimed).isNotNull();
			assertThat(claimed.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
			assertThat(context.getBean(RedisIdempotencyStore.class).find(id))
				.as("the blocking store, with the same key prefix, reads it")
				.hasValueSatisfying((record) -> assertThat(record.owner()).isEqualTo("owner"));
			assertThat(reactive.delete(id).block()).isTrue();
		});
	}

	@Test
	void aUsersReactiveStoreWins() {
		this.withLettuce
			.withBean("myReactiveStore", ReactiveIdempotencyStore.class,
					() -> ReactiveIdempotencyStore.of(new MemoryIdempotencyStore(Clock.systemUTC()),
							Schedulers.immediate()))
			.run((context) -> assertThat(context).doesNotHaveBean(ReactiveRedisIdempotencyStore.class)
				.hasSingleBean(ReactiveIdempotencyStore.class)
				.hasSingleBean(RedisIdempotencyStore.class));
	}

	@Test
	void withAReplicaWaitThereIsNoReactiveStore() {
		this.withLettuce.withPropertyValues("idempotency.redis.wait-replicas=1")
			.run((context) -> assertThat(context).hasSingleBean(RedisIdempotencyStore.class)
				.doesNotHaveBean(ReactiveIdempotencyStore.class));
	}

	@Test
	void withoutReactorThereIsNoReactiveStore() {
		this.withLettuce.withClassLoader(new FilteredClassLoader("reactor.core"))
			.run((context) -> assertThat(context).hasSingleBean(RedisIdempotencyStore.class)
				.doesNotHaveBean(ReactiveIdempotencyStore.class));
	}

	private static LettuceConnectionFactory connectionFactory() {
		URI uri = URI.create(TestServers.redisUrl());
		return new LettuceConnectionFactory(uri.getHost(), uri.getPort());
	}

}
