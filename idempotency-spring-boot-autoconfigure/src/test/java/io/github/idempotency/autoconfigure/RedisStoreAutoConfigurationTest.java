package io.github.idempotency.autoconfigure;

import javax.sql.DataSource;

import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

import java.util.UUID;

import io.github.idempotency.IdempotencyTemplate;
import io.github.idempotency.IdempotentRequest;
import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.hybrid.HybridIdempotencyStore;
import io.github.idempotency.store.jdbc.JdbcIdempotencyStore;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;
import io.github.idempotency.store.redis.RedisIdempotencyStore;
import io.github.idempotency.testservers.TestServers;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One fact of the redis and hybrid store auto-configuration per test.
 */
class RedisStoreAutoConfigurationTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotencyAutoConfiguration.class));

	private final ApplicationContextRunner withRedis = this.runner.withBean(RedisConnectionFactory.class,
			RedisStoreAutoConfigurationTest::connectionFactory);

	@Test
	void withARedisConnectionFactoryAndNoDataSourceTheStoreIsRedis() {
		this.withRedis.run((context) -> {
			assertThat(context).hasSingleBean(RedisIdempotencyStore.class);
			assertThat(context.getBean(IdempotencyEngine.class).store()).isInstanceOf(RedisIdempotencyStore.class);
		});
	}

	@Test
	void namingTheRedisBackendPicksRedis() {
		this.withRedis.withPropertyValues("idempotency.backend=redis")
			.run((context) -> assertThat(context).hasSingleBean(RedisIdempotencyStore.class)
				.doesNotHaveBean(MemoryIdempotencyStore.class));
	}

	@Test
	void namingTheMemoryBackendWinsOverARedisConnectionFactory() {
		this.withRedis.withPropertyValues("idempotency.backend=memory")
			.run((context) -> assertThat(context).hasSingleBean(MemoryIdempotencyStore.class)
				.doesNotHaveBean(RedisIdempotencyStore.class));
	}

	@Test
	void withoutSpringDataRedisOnTheClassPathTheRedisStoreBacksOff() {
		this.withRedis.withClassLoader(new FilteredClassLoader(RedisConnectionFactory.class))
			.run((context) -> assertThat(context).hasSingleBean(MemoryIdempotencyStore.class)
				.doesNotHaveBean(RedisIdempotencyStore.class));
	}

	@Test
	void namingRedisWithoutAConnectionFactoryFailsTheStartSayingWhatItNeeds() {
		this.runner.withPropertyValues("idempotency.backend=redis").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("redis a RedisConnectionFactory");
		});
	}

	@Test
	void hybridWithoutADataSourceFailsTheStartSayingWhatItNeeds() {
		this.withRedis.withPropertyValues("idempotency.backend=hybrid").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("hybrid a DataSource and a RedisConnectionFactory");
		});
	}

	@Test
	void namingHybridPutsRedisInFrontOfTheJdbcTable() {
		this.withRedis.withBean(DataSource.class, RedisStoreAutoConfigurationTest::dataSource)
			.withPropertyValues("idempotency.backend=hybrid")
			.run((context) -> {
				assertThat(context).hasSingleBean(HybridIdempotencyStore.class)
					.hasSingleBean(IdempotencyJdbcSchemaInitializer.class)
					.doesNotHaveBean(JdbcIdempotencyStore.class);
				IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
				String key = UUID.randomUUID().toString();
				assertThat(template.execute(IdempotentRequest.of("hybrid", key), String.class, () -> "first"))
					.isEqualTo("first");
				assertThat(template.execute(IdempotentRequest.of("hybrid", key), String.class, () -> "second"))
					.isEqualTo("first");
			});
	}

	@Test
	void withADataSourceAndARedisConnectionFactoryTheStoreIsJdbc() {
		this.withRedis.withBean(DataSource.class, RedisStoreAutoConfigurationTest::dataSource)
			.run((context) -> assertThat(context).hasSingleBean(JdbcIdempotencyStore.class)
				.doesNotHaveBean(RedisIdempotencyStore.class));
	}

	@Test
	void aUsersStoreBeanWinsOverRedis() {
		this.withRedis.withBean("myStore", IdempotencyStore.class, MemoryIdempotencyStore::new)
			.run((context) -> assertThat(context).doesNotHaveBean(RedisIdempotencyStore.class));
	}

	private static DataSource dataSource() {
		JdbcDataSource dataSource = new JdbcDataSource();
		dataSource.setURL("jdbc:h2:mem:hybrid;DB_CLOSE_DELAY=-1");
		return dataSource;
	}

	private static LettuceConnectionFactory connectionFactory() {
		java.net.URI uri = java.net.URI.create(TestServers.redisUrl());
		return new LettuceConnectionFactory(uri.getHost(), uri.getPort());
	}

}
