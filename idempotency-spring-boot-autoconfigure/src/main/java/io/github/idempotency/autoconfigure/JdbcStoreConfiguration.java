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
@ConditionalOnClass(JdbcClient.class)
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnMissingBean(IdempotencyStore.class)
@Conditional(BackendCondition.class)
@Import(JdbcSupportConfiguration.class)
class JdbcStoreConfiguration {

	@Bean
	JdbcIdempotencyStore idempotencyStore(DataSource dataSource, IdempotencyJdbcProperties properties) {
		return createStore(dataSource, properties);
	}

	static JdbcIdempotencyStore createStore(DataSource dataSource, IdempotencyJdbcProperties properties) {
		return new JdbcIdempotencyStore(dataSource, properties.getTableName(), properties.getLockTimeout(),
				Clock.systemUTC());
	}

}
