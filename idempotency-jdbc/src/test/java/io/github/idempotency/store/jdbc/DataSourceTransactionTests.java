package io.github.idempotency.store.jdbc;

import javax.sql.DataSource;

import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * The jdbc store in the transaction of a {@link DataSourceTransactionManager} on its
 * {@code DataSource}, whose commit is made to fail at the server
 * ({@link StatementCounter#failNextCommit()}: the transaction rolled back and the commit
 * throwing, which Spring reports as an unknown outcome); each database is a small
 * subclass.
 */
abstract class DataSourceTransactionTests extends CallerTransactionTests {

	/**
	 * @param database the database on a pool of its own
	 * @param platform the schema file's platform
	 */
	DataSourceTransactionTests(DataSource database, String platform) {
		super(database, platform, new StatementCounter(database), DataSourceTransactionManager::new);
	}

	@Override
	void failTheCommit() {
		((StatementCounter) this.dataSource).failNextCommit();
	}

}
