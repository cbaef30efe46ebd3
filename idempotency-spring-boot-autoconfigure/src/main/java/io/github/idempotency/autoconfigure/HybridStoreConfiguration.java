package io.github.idempotency.autoconfigure;

import java.time.Clock;

import javax.sql.DataSource;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.hybrid.HybridIdempotencyStore;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * The hybrid store: a Redis cache of finished records in front of the jdbc store. Only
 * used when {@code idempotency.backend=hybrid} names it.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(RedisConnectionFactory.class)
@ConditionalOnBean({ RedisConnectionFactory.class, DataSource.class })
@ConditionalOnMissingBean(IdempotencyStore.class)
@Conditional(BackendCondition.class)
@EnableConfigurationProperties({ IdempotencyRedisProperties.class, IdempotencyHybridProperties.class })
class HybridStoreConfiguration {

	@Bean
	HybridIdempotencyStore idempotencyStore(RedisConnectionFactory connectionFactory, DataSource dataSource,
			IdempotencyRedisProperties redisProperties, IdempotencyHybridProperties hybridProperties) {
		return new HybridIdempotencyStore(sourceOfTruth(dataSource), connectionFactory,
				redisProperties.getKeyPrefix(), hybridProperties.getCacheTtl(), Clock.systemUTC());
	}

	/**
	 * The store behind the cache: the jdbc store on {@code dataSource}, built as
	 * {@code idempotency.backend=jdbc} builds it. This is the one place that changes when
	 * the jdbc store joins this module; until then the hybrid backend cannot start.
	 * @param dataSource the application's data source
	 * @return the source of truth
	 */
	static IdempotencyStore sourceOfTruth(DataSource dataSource) {
		throw new IllegalStateException("idempotency.backend=hybrid needs the jdbc store as its source of truth, "
				+ "and this build of the idempotency starter does not contain it yet: use idempotency.backend=redis "
				+ "or jdbc");
	}

}
