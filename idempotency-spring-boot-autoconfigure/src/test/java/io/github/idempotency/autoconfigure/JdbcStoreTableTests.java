package io.github.idempotency.autoconfigure;

import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;

import io.github.idempotency.IdempotencyTemplate;
import io.github.idempotency.IdempotentRequest;
import io.github.idempotency.testservers.TestDatabases;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceInitializationAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.BadSqlGrammarException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.jdbc.support.JdbcUtils;
import org.springframework.jdbc.support.MetaDataAccessException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The jdbc store's table at start, one fact per test: a missing table or column fails the
 * start, saying how to create it; {@code initialize-schema=always} creates the table
 * {@code table-name} names. Each database is a small subclass giving every test a
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

	/**
	 * @return the name of a new, empty schema in this test's database
	 */
	protected abstract String createSchema();

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

	@Test
	void withAlwaysTheShippedScriptCreatesTheTableNamedAndNoOther() {
		runner().withPropertyValues("idempotency.jdbc.initialize-schema=always", "idempotency.jdbc.table-name=custom_x")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertRoundTrip(context, "custom_x");
				assertThat(exists("idempotency_record")).isFalse();
			});
	}

	@Test
	void withAlwaysTheTableNamedGetsAnExpiryIndexOfItsOwn() {
		TestDatabases.createTable(database(), platform(), "idempotency_record");
		runner().withPropertyValues("idempotency.jdbc.initialize-schema=always", "idempotency.jdbc.table-name=custom_x")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(indexes(null, "custom_x")).contains("custom_x_expires_at");
			});
	}

	@Test
	void withAlwaysASchemaQualifiedTableIsCreatedInThatSchema() {
		String schema = createSchema();
		String table = schema + ".custom_x";
		runner().withPropertyValues("idempotency.jdbc.initialize-schema=always", "idempotency.jdbc.table-name=" + table)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertRoundTrip(context, table);
				assertThat(indexes(schema, "custom_x")).contains("custom_x_expires_at");
				assertThat(exists("custom_x")).isFalse();
			});
	}

	@Test
	void aMixedCaseTableNameIsCheckedAsTheDatabaseFoldsIt() {
		TestDatabases.createTable(database(), platform(), "custom_x");
		runner().withPropertyValues("idempotency.jdbc.initialize-schema=never", "idempotency.jdbc.table-name=Custom_X")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertRoundTrip(context, "custom_x");
			});
	}

	@Test
	void withAlwaysAScriptOfYourOwnRunsAsItIs() {
		runner().withPropertyValues("idempotency.jdbc.initialize-schema=always",
				"idempotency.jdbc.schema=classpath:io/github/idempotency/autoconfigure/own-schema.sql",
				"idempotency.jdbc.table-name=own_records")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertRoundTrip(context, "own_records");
				assertThat(exists("idempotency_record")).isTrue();
			});
	}

	@Test
	void aTableThatAnotherDatabaseInitializerCreatesIsThereBeforeTheCheck() {
		// spring.sql.init is detected like Flyway and Liquibase: the store waits for each
		runner().withConfiguration(AutoConfigurations.of(DataSourceInitializationAutoConfiguration.class))
			.withPropertyValues("idempotency.jdbc.initialize-schema=never", "idempotency.jdbc.table-name=own_records",
					"spring.sql.init.mode=always",
					"spring.sql.init.schema-locations=classpath:io/github/idempotency/autoconfigure/own-schema.sql")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertRoundTrip(context, "own_records");
			});
	}

	private static void assertRoundTrip(AssertableApplicationContext context, String table) {
		IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
		assertThat(template.execute(IdempotentRequest.of("payment", "k1"), String.class, () -> "first"))
			.isEqualTo("first");
		assertThat(template.execute(IdempotentRequest.of("payment", "k1"), String.class, () -> "second"))
			.isEqualTo("first");
		assertThat(JdbcClient.create(context.getBean(DataSource.class))
			.sql("SELECT response FROM " + table + " WHERE workflow = 'payment'")
			.query(String.class)
			.single()).isEqualTo("\"first\"");
	}

	private boolean exists(String table) {
		try {
			jdbc().sql("SELECT 1 FROM " + table + " WHERE 1 = 0").query().listOfRows();
			return true;
		}
		catch (BadSqlGrammarException ex) {
			return false;
		}
	}

	/**
	 * The names of a table's indexes, in lower case.
	 * @param schema the table's schema, or null for the connection's
	 * @param table the table's name, unquoted
	 */
	private List<String> indexes(String schema, String table) throws MetaDataAccessException {
		return JdbcUtils.extractDatabaseMetaData(database(), (metaData) -> {
			boolean upperCase = metaData.storesUpperCaseIdentifiers();
			String schemaName = (schema != null) ? schema : metaData.getConnection().getSchema();
			List<String> names = new ArrayList<>();
			try (ResultSet indexes = metaData.getIndexInfo(null, upperCase ? schemaName.toUpperCase(Locale.ROOT) : schemaName,
					upperCase ? table.toUpperCase(Locale.ROOT) : table, false, false)) {
				while (indexes.next()) {
					if (indexes.getString("INDEX_NAME") != null) {
						names.add(indexes.getString("INDEX_NAME").toLowerCase(Locale.ROOT));
					}
				}
			}
			return names;
		});
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
