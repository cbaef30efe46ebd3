package io.github.idempotency.autoconfigure;

import java.time.Clock;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.ReactiveIdempotencyStore;
import io.github.idempotency.store.redis.ReactiveRedisIdempotencyStore;
import io.github.idempotency.store.redis.RedisIdempotencyStore;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * The redis store, on the application's {@link RedisConnectionFactory}, and with Reactor and
 * a {@link ReactiveRedisConnectionFactory} its non-blocking variant.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ RedisIdempotencyStore.class, RedisConnectionFactory.class })
@ConditionalOnBean(RedisConnectionFactory.class)
@ConditionalOnMissingBean(IdempotencyStore.class)
@Conditional(BackendCondition.class)
@EnableConfigurationProperties(IdempotencyRedisProperties.class)
class RedisStoreConfiguration {

	@Bean
	RedisIdempotencyStore idempotencyStore(RedisConnectionFactory connectionFactory,
			IdempotencyRedisProperties properties) {
		RedisIdempotencyStore store = new RedisIdempotencyStore(connectionFactory, properties.getKeyPrefix(),
				Clock.systemUTC());
		store.setReplicaWait(properties.getWaitReplicas(), properties.getWaitTimeout());
		return store;
	}

	/**
	 * The non-blocking view of the same records, on the application's
	 * {@link ReactiveRedisConnectionFactory} (Spring Boot's Lettuce factory is both), with
	 * the same key prefix. Not with a replica wait, which only the blocking store does.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "reactor.core.publisher.Mono")
	@ConditionalOnBean(ReactiveRedisConnectionFactory.class)
	@ConditionalOnProperty(prefix = "idempotency.redis", name = "wait-replicas", havingValue = "0",
			matchIfMissing = true)
	static class ReactiveRedisStoreConfiguration {

		@Bean
		@ConditionalOnMissingBean(ReactiveIdempotencyStore.class)
		ReactiveRedisIdempotencyStore reactiveIdempotencyStore(ReactiveRedisConnectionFactory connectionFactory,
				IdempotencyRedisProperties properties) {
			return new ReactiveRedisIdempotencyStore(connectionFactory, properties.getKeyPrefix(), Clock.systemUTC());
		}

	}

}
