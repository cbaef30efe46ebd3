package io.github.idempotency.autoconfigure;

import java.time.Duration;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.ReactiveIdempotencyStore;
import reactor.core.scheduler.Schedulers;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.store.ExpiredRecordsCleaner;
import org.springframework.beans.factory.ObjectProvider;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The memory store, and the scheduled cleanup that keeps it from growing for ever.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnMissingBean(IdempotencyStore.class)
@Conditional(BackendCondition.class)
@EnableConfigurationProperties(IdempotencyMemoryProperties.class)
class MemoryStoreConfiguration {

	private static final Log logger = LogFactory.getLog(MemoryStoreConfiguration.class);

	@Bean
	MemoryIdempotencyStore idempotencyStore(Environment environment, ConfigurableListableBeanFactory beanFactory) {
		if (!environment.containsProperty("idempotency.backend")) {
			String unused = StoreModules.unusedConnection(beanFactory, beanFactory.getBeanClassLoader());
			if (unused != null) {
				// the application meant its database or Redis to keep the records: never lose them silently
				throw new IllegalStateException(unused + ": add it, or set idempotency.backend=memory to keep "
						+ "idempotency records in memory (lost on restart, not shared between instances)");
			}
			logger.warn("No DataSource or Redis connection found and idempotency.backend is not set: using the "
					+ "in-memory idempotency store. Records are lost on restart and not shared between instances; "
					+ "set idempotency.backend=jdbc or redis for production.");
		}
		return new MemoryIdempotencyStore();
	}

	@Bean
	@ConditionalOnMissingBean
	@Conditional(OnCleanupEnabledCondition.class)
	ExpiredRecordsCleaner idempotencyMemoryCleaner(MemoryIdempotencyStore store,
			IdempotencyMemoryProperties properties, ObjectProvider<IdempotencyObserver> observer) {
		return new ExpiredRecordsCleaner("memory", store::purgeExpired, properties.getCleanupInterval(),
				observer.getIfAvailable(() -> IdempotencyObserver.NONE));
	}

	/**
	 * The memory store never waits on a server: with Reactor, asynchronous calls use it
	 * without a thread of their own ({@link ReactiveIdempotencyStore#of}).
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "reactor.core.publisher.Mono")
	static class NonBlockingMemoryStoreConfiguration {

		@Bean
		@ConditionalOnMissingBean
		ReactiveIdempotencyStore reactiveIdempotencyStore(MemoryIdempotencyStore store) {
			return ReactiveIdempotencyStore.of(store, Schedulers.immediate());
		}

	}

	static class OnCleanupEnabledCondition extends OnPositiveIntervalCondition {

		OnCleanupEnabledCondition() {
			super("idempotency.memory.cleanup-interval", Duration.ofMinutes(1));
		}

	}

}
