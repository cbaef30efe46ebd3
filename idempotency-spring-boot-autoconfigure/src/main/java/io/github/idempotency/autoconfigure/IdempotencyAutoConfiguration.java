package io.github.idempotency.autoconfigure;

import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.BatchFailures;
import io.github.idempotency.Idempotent;
import io.github.idempotency.IdempotencyRuntime;
import io.github.idempotency.IdempotencyTemplate;
import io.github.idempotency.aop.IdempotentAdvisor;
import io.github.idempotency.aop.IdempotentMethodAdapter;
import io.github.idempotency.aop.IdempotentMethodResolver;
import io.github.idempotency.aop.IdempotentMethodValidator;
import io.github.idempotency.internal.DefaultIdempotencyTemplate;
import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.IdempotencyKeyConverter;
import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.metrics.MicrometerIdempotencyObserver;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.ReactiveIdempotencyStore;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.io.ResourceLoader;

/**
 * Auto-configuration of the idempotency starter: the store chosen by
 * {@code idempotency.backend} (or detected), the engine, {@link IdempotencyTemplate}, the
 * {@link Idempotent} advisor and, with Micrometer, the meters; a warning for each
 * {@code idempotency.*} property that names no property ({@link UnknownPropertiesWarning}).
 */
@AutoConfiguration(afterName = { "org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration",
		"org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
		"org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
		"org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration",
		"org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration",
		"org.springframework.boot.r2dbc.autoconfigure.R2dbcTransactionManagerAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
		"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
		"org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration",
		"org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
		"org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration" })
@ConditionalOnBooleanProperty(name = "idempotency.enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdempotencyProperties.class)
@Import({ JdbcStoreConfiguration.class, R2dbcStoreConfiguration.class, RedisStoreConfiguration.class, HybridStoreConfiguration.class, MemoryStoreConfiguration.class })
public final class IdempotencyAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	IdempotencyRuntime idempotencyEngine(IdempotencyProperties properties, ObjectProvider<IdempotencyStore> store,
			ObjectProvider<JsonMapper> jsonMapper, ObjectProvider<IdempotencyObserver> observer,
			ObjectProvider<ObservationRegistry> observations, ObjectProvider<IdempotencyKeyConverter> keyConverters,
			ObjectProvider<ReactiveIdempotencyStore> reactiveStore, ResourceLoader resourceLoader) {
		IdempotencyStore resolvedStore = store.getIfUnique(() -> {
			IdempotencyBackend backend = properties.getBackend();
			List<String> missing = (backend != null) ? StoreModules.missing(backend, resourceLoader.getClassLoader())
					: List.of();
			if (backend != null && !missing.isEmpty()) {
				throw StoreModules.failure(backend, missing);
			}
			throw new IllegalStateException("No IdempotencyStore for idempotency.backend=" + properties.getBackend()
					+ ": jdbc needs a DataSource bean, r2dbc a ConnectionFactory bean, redis a RedisConnectionFactory "
					+ "bean, hybrid a DataSource and a RedisConnectionFactory;"
					+ " or define an IdempotencyStore bean");
		});
		IdempotencyEngine.Builder engine = IdempotencyEngine
			.builder(resolvedStore, jsonMapper.getIfAvailable(() -> JsonMapper.builder().build()))
			.settings(properties.toEngineSettings())
			.observer(observer.getIfAvailable(() -> IdempotencyObserver.NONE))
			.observations(observations.getIfAvailable(() -> ObservationRegistry.NOOP),
					properties.getObservation().isIncludeKey())
			.keyConverters(keyConverters.orderedStream().toList());
		// the store's non-blocking side, for asynchronous calls (the same records)
		reactiveStore.ifUnique(engine::reactiveStore);
		return engine.build();
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotencyTemplate idempotencyTemplate(IdempotencyRuntime engine) {
		return new DefaultIdempotencyTemplate(IdempotencyEngine.of(engine));
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotentMethodResolver idempotentMethodResolver(IdempotencyRuntime engine, BeanFactory beanFactory,
			ObjectProvider<IdempotentMethodAdapter> adapters, ObjectProvider<BatchFailures> batchFailures) {
		return new IdempotentMethodResolver(engine, beanFactory, adapters.orderedStream().toList(),
				batchFailures.getIfAvailable(() -> BatchFailures.NONE));
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static UnknownPropertiesWarning idempotencyUnknownPropertiesWarning(Environment environment,
			ResourceLoader resourceLoader) {
		return new UnknownPropertiesWarning(environment, resourceLoader.getClassLoader());
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static IdempotentMethodValidator idempotentMethodValidator(ObjectProvider<IdempotentMethodResolver> resolver) {
		return new IdempotentMethodValidator(resolver);
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	@ConditionalOnMissingBean(name = "idempotentAdvisor")
	static IdempotentAdvisor idempotentAdvisor(ObjectProvider<IdempotentMethodResolver> resolver,
			Environment environment) {
		// static and lazy: advisors are created before other beans, the store must not be
		int order = environment.getProperty("idempotency.aspect-order", Integer.class,
				IdempotencyProperties.DEFAULT_ASPECT_ORDER);
		return new IdempotentAdvisor(resolver::getObject, order);
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	@ConditionalOnMissingBean(name = "idempotentHandlerMethodAdvisor")
	static IdempotentAdvisor idempotentHandlerMethodAdvisor(ObjectProvider<IdempotentMethodResolver> resolver) {
		return IdempotentAdvisor.forHandlerMethods(resolver::getObject);
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterRegistry.class)
	@ConditionalOnBean(MeterRegistry.class)
	static class MetricsConfiguration {

		@Bean
		@ConditionalOnMissingBean
		IdempotencyObserver idempotencyObserver(MeterRegistry registry, ObjectProvider<IdempotencyStore> store) {
			IdempotencyStore resolved = store.getIfUnique();
			return new MicrometerIdempotencyObserver(registry, (resolved != null) ? resolved.backend() : "none");
		}

	}

}
