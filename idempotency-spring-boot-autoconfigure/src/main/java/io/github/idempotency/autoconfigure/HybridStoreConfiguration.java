package io.github.idempotency.autoconfigure;

import java.time.Clock;

import javax.sql.DataSource;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.hybrid.HybridIdempotencyStore;
import io.github.idempotency.store.jdbc.JdbcIdempotencyStore;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The hybrid store: a Redis cache of finished records in front of the jdbc store. Only
 * used when {@code idempotency.backend=hybrid} names it.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ HybridIdempotencyStore.class, JdbcIdempotencyStore.class, JdbcClient.class,
		RedisConnectionFactory.class })
@ConditionalOnBean(RedisConnectionFactory.class)
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnMissingBean(IdempotencyStore.class)
@Conditional(BackendCondition.class)
@Import(JdbcSupportConfiguration.class)
@EnableConfigurationProperties({ IdempotencyRedisProperties.class, IdempotencyHybridProperties.class })
class HybridStoreConfiguration {

	@Bean
	HybridIdempotencyStore idempotencyStore(RedisConnectionFactory connectionFactory, DataSource dataSource,
			IdempotencyJdbcProperties jdbcProperties, IdempotencyRedisProperties redisProperties,
			IdempotencyHybridProperties hybridProperties) {
		return new HybridIdempotencyStore(sourceOfTruth(dataSource, jdbcProperties), connectionFactory,
				redisProperties.getKeyPrefix(), hybridProperties.getCacheTtl(), Clock.systemUTC());
	}

	/**
	 * The store behind the cache: the jdbc store on {@code dataSource}, built as
	 * {@code idempotency.backend=jdbc} builds it.
	 * @param dataSource the application's data source
	 * @param properties the jdbc store's properties
	 * @return the source of truth
	 */
	static IdempotencyStore sourceOfTruth(DataSource dataSource, IdempotencyJdbcProperties properties) {
		return JdbcStoreConfiguration.createStore(dataSource, properties);
	}

}
