package io.github.idempotency.autoconfigure;

import java.time.Clock;
import java.time.Duration;

import io.r2dbc.spi.ConnectionFactory;
import reactor.core.Exceptions;

import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.store.CleanupPace;
import io.github.idempotency.store.ExpiredRecordsCleaner;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.ReactiveIdempotencyStore;
import io.github.idempotency.store.r2dbc.R2dbcIdempotencyStore;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.r2dbc.core.DatabaseClient;

/**
 * The r2dbc store, on the application's R2DBC {@code ConnectionFactory}: detected after the
 * jdbc store, so chosen when there is a {@code ConnectionFactory} and no {@code DataSource}
 * (or when {@code idempotency.backend=r2dbc}). It is the {@link ReactiveIdempotencyStore}
 * bean, and through {@link ReactiveIdempotencyStore#blocking} the {@link IdempotencyStore}
 * bean, which the blocking shapes use.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ R2dbcIdempotencyStore.class, DatabaseClient.class })
@ConditionalOnSingleCandidate(ConnectionFactory.class)
@ConditionalOnMissingBean({ IdempotencyStore.class, ReactiveIdempotencyStore.class })
@Conditional(BackendCondition.class)
@EnableConfigurationProperties(IdempotencyR2dbcProperties.class)
class R2dbcStoreConfiguration {

	@Bean
	@ConditionalOnProperty(name = "idempotency.r2dbc.initialize-schema", havingValue = "always")
	IdempotencyR2dbcSchemaInitializer idempotencyR2dbcSchemaInitializer(ConnectionFactory connectionFactory,
			IdempotencyR2dbcProperties properties) {
		return new IdempotencyR2dbcSchemaInitializer(connectionFactory, properties);
	}

	@Bean
	R2dbcIdempotencyStore reactiveIdempotencyStore(ConnectionFactory connectionFactory,
			IdempotencyR2dbcProperties properties, ObjectProvider<IdempotencyR2dbcSchemaInitializer> schema) {
		// the table first, when it is to be created
		schema.getIfAvailable();
		R2dbcIdempotencyStore store = new R2dbcIdempotencyStore(connectionFactory, properties.getTableName(),
				properties.getLockTimeout(), Clock.systemUTC());
		store.setReadFirst(properties.getReadFirst());
		return store;
	}

	@Bean
	IdempotencyStore idempotencyStore(R2dbcIdempotencyStore reactiveIdempotencyStore) {
		return ReactiveIdempotencyStore.blocking(reactiveIdempotencyStore);
	}

	/**
	 * The cleanup: its own thread, which waits for each run. Interrupted (the application
	 * stops), the run ends as the jdbc store's does: quietly, the thread still interrupted.
	 */
	@Bean
	@ConditionalOnMissingBean
	@Conditional(OnCleanupEnabledCondition.class)
	ExpiredRecordsCleaner idempotencyR2dbcCleaner(R2dbcIdempotencyStore reactiveIdempotencyStore,
			IdempotencyR2dbcProperties properties, ObjectProvider<IdempotencyObserver> observer) {
		IdempotencyJdbcProperties.Cleanup cleanup = properties.getCleanup();
		CleanupPace pace = new CleanupPace(cleanup.getBatchSize(), cleanup.getDutyCycle(),
				cleanup.getMaxRowsPerSecond());
		return new ExpiredRecordsCleaner("r2dbc", () -> {
			try {
				Long deleted = reactiveIdempotencyStore.deleteExpired(pace).block();
				return (deleted != null) ? (int) Math.min(Integer.MAX_VALUE, deleted) : 0;
			}
			catch (RuntimeException ex) {
				if (Exceptions.unwrap(ex) instanceof InterruptedException) {
					// block() cancelled the run, and left the thread interrupted
					return 0;
				}
				throw ex;
			}
		}, cleanup.getInterval(), observer.getIfAvailable(() -> IdempotencyObserver.NONE));
	}

	static class OnCleanupEnabledCondition extends OnPositiveIntervalCondition {

		OnCleanupEnabledCondition() {
			super("idempotency.r2dbc.cleanup.interval", Duration.ofHours(1));
		}

	}

}
