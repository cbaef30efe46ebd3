package io.github.idempotency.autoconfigure;

import java.time.Clock;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.redis.RedisIdempotencyStore;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * The redis store, on the application's {@link RedisConnectionFactory}.
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

}
