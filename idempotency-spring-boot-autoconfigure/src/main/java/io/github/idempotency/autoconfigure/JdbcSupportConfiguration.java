package io.github.idempotency.autoconfigure;

import java.time.Duration;

import javax.sql.DataSource;

import io.github.idempotency.store.CleanupPace;
import io.github.idempotency.store.ExpiredRecordsCleaner;
import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.store.jdbc.JdbcIdempotencyStore;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.sql.autoconfigure.init.OnDatabaseInitializationCondition;
import org.springframework.boot.sql.init.dependency.DatabaseInitializationDependencyConfigurer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * What every store on the jdbc table needs (the jdbc and the hybrid backends): its schema
 * and the cleanup of expired records. The stores wait for database initialization (this
 * schema, Flyway, Liquibase) even when no other auto-configuration turned that ordering
 * on ({@link DatabaseInitializationDependencyConfigurer}, as Spring Session JDBC does).
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(IdempotencyJdbcProperties.class)
@Import(DatabaseInitializationDependencyConfigurer.class)
class JdbcSupportConfiguration {

	@Bean
	@ConditionalOnMissingBean
	@Conditional(OnIdempotencyJdbcInitializationCondition.class)
	IdempotencyJdbcSchemaInitializer idempotencyJdbcSchemaInitializer(DataSource dataSource,
			IdempotencyJdbcProperties properties) {
		return new IdempotencyJdbcSchemaInitializer(dataSource, properties);
	}

	@Bean
	@ConditionalOnMissingBean
	@Conditional(OnCleanupEnabledCondition.class)
	ExpiredRecordsCleaner idempotencyJdbcCleaner(DataSource dataSource, IdempotencyJdbcProperties properties,
			ObjectProvider<IdempotencyObserver> observer) {
		JdbcIdempotencyStore store = JdbcStoreConfiguration.createStore(dataSource, properties);
		IdempotencyJdbcProperties.Cleanup cleanup = properties.getCleanup();
		CleanupPace pace = new CleanupPace(cleanup.getBatchSize(), cleanup.getDutyCycle(),
				cleanup.getMaxRowsPerSecond());
		return new ExpiredRecordsCleaner("jdbc", () -> store.deleteExpired(pace), cleanup.getInterval(),
				observer.getIfAvailable(() -> IdempotencyObserver.NONE));
	}

	static class OnIdempotencyJdbcInitializationCondition extends OnDatabaseInitializationCondition {

		OnIdempotencyJdbcInitializationCondition() {
			super("Idempotency JDBC", "idempotency.jdbc.initialize-schema");
		}

	}

	static class OnCleanupEnabledCondition extends OnPositiveIntervalCondition {

		OnCleanupEnabledCondition() {
			super("idempotency.jdbc.cleanup.interval", Duration.ofHours(1));
		}

	}

}
