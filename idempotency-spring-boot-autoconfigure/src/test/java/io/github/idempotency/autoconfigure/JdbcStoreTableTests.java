package io.github.idempotency.autoconfigure;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;

import io.github.idempotency.testsupport.TestDatabases;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The jdbc store's table at start, one fact per test: a missing table or column fails the
 * start, saying how to create it. Each database is a small subclass giving every test a
 * database of its own (a fresh H2 database, a fresh PostgreSQL schema).
 */
abstract class JdbcStoreTableTests {

	/**
	 * @return the JDBC URL of this test's own database, empty at first
	 */
	protected abstract String url();

	/**
	 * @return the platform of the shipped schema file ({@code h2}, {@code postgresql})
	 */
	protected abstract String platform();

	protected ApplicationContextRunner runner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, JacksonAutoConfiguration.class,
					IdempotencyAutoConfiguration.class))
			.withPropertyValues("spring.datasource.url=" + url(), "spring.datasource.generate-unique-name=false");
	}

	@Test
	void withNoTableTheStartFailsNamingTheTableAndBothWaysToCreateIt() {
		runner().withPropertyValues("idempotency.jdbc.initialize-schema=never").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(tableFailure(context)).contains("table 'idempotency_record' does not exist")
				.contains("idempotency.jdbc.initialize-schema=always")
				.contains("io/github/idempotency/store/jdbc/schema-" + platform() + ".sql")
				.contains("Flyway or Liquibase");
		});
	}

	@Test
	void withATableLackingAColumnTheStartFailsNamingTheColumn() {
		TestDatabases.createTable(database(), platform(), "idempotency_record");
		jdbc().sql("ALTER TABLE idempotency_record DROP COLUMN recovery_point").update();
		runner().withPropertyValues("idempotency.jdbc.initialize-schema=never").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(tableFailure(context)).contains("table 'idempotency_record' lacks the column recovery_point.")
				.contains("io/github/idempotency/store/jdbc/schema-" + platform() + ".sql");
		});
	}

	@Test
	void withTheWholeTableTheStoreStarts() {
		TestDatabases.createTable(database(), platform(), "idempotency_record");
		runner().withPropertyValues("idempotency.jdbc.initialize-schema=never")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	/**
	 * @return a data source on this test's database, apart from the context's
	 */
	protected DataSource database() {
		return new DriverManagerDataSource(url());
	}

	protected JdbcClient jdbc() {
		return JdbcClient.create(database());
	}

	/**
	 * The message of the failure that names the table, wherever it is among the causes.
	 */
	static String tableFailure(AssertableApplicationContext context) {
		for (Throwable ex = context.getStartupFailure(); ex != null; ex = ex.getCause()) {
			if (ex instanceof IllegalStateException && ex.getMessage() != null
					&& ex.getMessage().startsWith("The jdbc idempotency store's table")) {
				return ex.getMessage();
			}
		}
		throw new AssertionError("The start did not fail on the table", context.getStartupFailure());
	}

}
