package io.github.idempotency.store.jdbc.tx;

import javax.sql.DataSource;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A JDBC application: its transactions are a {@link DataSourceTransactionManager}'s, which
 * supports savepoints ({@code NESTED}), and whose next commit a test can make fail.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
class TransactionBoundaryApplication {

	@Bean
	FailingCommits transactionManager(DataSource dataSource) {
		return new FailingCommits(dataSource);
	}

	/**
	 * Created in a transaction, so that its table is committed on a pool whose connections
	 * do not auto-commit too (PostgreSQL's DDL is transactional).
	 */
	@Bean
	Payments payments(JdbcClient jdbc, DataSourceTransactionManager transactionManager) {
		return new TransactionTemplate(transactionManager).execute((status) -> new Payments(jdbc));
	}

}
