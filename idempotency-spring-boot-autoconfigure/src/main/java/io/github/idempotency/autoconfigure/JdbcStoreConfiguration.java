package io.github.idempotency.autoconfigure;

import java.time.Clock;

import javax.sql.DataSource;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.jdbc.JdbcIdempotencyStore;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.simple.JdbcClient;

@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ JdbcIdempotencyStore.class, JdbcClient.class })
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnMissingBean(IdempotencyStore.class)
@Conditional(BackendCondition.class)
@Import(JdbcSupportConfiguration.class)
class JdbcStoreConfiguration {

	@Bean
	JdbcIdempotencyStore idempotencyStore(DataSource dataSource, IdempotencyJdbcProperties properties) {
		return createStore(dataSource, properties);
	}

	/**
	 * The jdbc store, its table checked: every bean that calls this waits for database
	 * initialization ({@link JdbcStoreDependsOnDatabaseInitializationDetector}), so a
	 * table still missing now would fail every call.
	 * @param dataSource the application's data source
	 * @param properties the jdbc store's properties
	 * @return the store
	 */
	static JdbcIdempotencyStore createStore(DataSource dataSource, IdempotencyJdbcProperties properties) {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(dataSource, properties.getTableName(),
				properties.getLockTimeout(), Clock.systemUTC());
		store.setReadFirst(properties.getReadFirst());
		JdbcTableVerifier.verify(dataSource, properties);
		return store;
	}

}
