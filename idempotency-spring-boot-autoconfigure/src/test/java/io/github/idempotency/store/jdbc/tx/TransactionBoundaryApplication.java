package io.github.idempotency.store.jdbc.tx;

import javax.sql.DataSource;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * A JDBC application: its transactions are a {@link DataSourceTransactionManager}'s, which
 * supports savepoints ({@code NESTED}).
 */
@SpringBootConfiguration
@EnableAutoConfiguration
class TransactionBoundaryApplication {

	@Bean
	DataSourceTransactionManager transactionManager(DataSource dataSource) {
		return new DataSourceTransactionManager(dataSource);
	}

	@Bean
	Payments payments(JdbcClient jdbc) {
		return new Payments(jdbc);
	}

}
