package io.github.idempotency.autoconfigure;

import java.util.List;

import javax.sql.DataSource;

import io.github.idempotency.store.jdbc.JdbcIdempotencyStore;
import org.springframework.boot.jdbc.init.PlatformPlaceholderDatabaseDriverResolver;
import org.springframework.boot.sql.init.DatabaseInitializationMode;
import org.springframework.jdbc.BadSqlGrammarException;
import org.springframework.util.StringUtils;

/**
 * Fails the start when the jdbc store's table is missing or lacks a column, naming the
 * table and how to create it ({@link JdbcTableMissingException}), rather than letting every message fail with a
 * {@code BadSqlGrammarException} and be redelivered forever. Run where the store is
 * created, which waits for database initialization (the schema script, Flyway,
 * Liquibase): see {@link JdbcStoreDependsOnDatabaseInitializationDetector}.
 */
final class JdbcTableVerifier {

	private static final String SHIPPED_SCRIPT = "io/github/idempotency/store/jdbc/schema-@@platform@@.sql";

	private JdbcTableVerifier() {
	}

	static void verify(DataSource dataSource, IdempotencyJdbcProperties properties) {
		String table = properties.getTableName();
		List<String> missing;
		try {
			missing = JdbcIdempotencyStore.missingColumns(dataSource, table);
		}
		catch (BadSqlGrammarException ex) {
			throw new JdbcTableMissingException("The jdbc idempotency store's table '" + table + "' does not exist."
					+ initializationFailure(properties), "Create it: set idempotency.jdbc.initialize-schema=always to "
					+ "have the starter create it at start (the default, embedded, does so only on embedded databases "
					+ "such as H2), or run the shipped script " + shippedScript(dataSource, properties)
					+ renamed(table) + " in a Flyway or Liquibase migration.", ex);
		}
		if (!missing.isEmpty()) {
			throw new JdbcTableMissingException("The jdbc idempotency store's table '" + table + "' lacks the column"
					+ ((missing.size() > 1) ? "s " : " ") + String.join(", ", missing) + ".", "Give it the columns of "
					+ "the shipped script " + shippedScript(dataSource, properties) + renamed(table)
					+ " in a Flyway or Liquibase migration, or drop it and set idempotency.jdbc.initialize-schema=always "
					+ "to have the starter create it at start.", null);
		}
	}

	/**
	 * Why the table can be missing although the starter ran a schema script.
	 */
	private static String initializationFailure(IdempotencyJdbcProperties properties) {
		if (properties.getInitializeSchema() != DatabaseInitializationMode.ALWAYS) {
			return "";
		}
		return " idempotency.jdbc.initialize-schema=always ran " + properties.getSchema() + " but it did not create "
				+ "the table" + (properties.isContinueOnError() ? " (its errors are logged at DEBUG only while "
						+ "idempotency.jdbc.continue-on-error=true, the default: set it to false to see them)" : "")
				+ ".";
	}

	private static String shippedScript(DataSource dataSource, IdempotencyJdbcProperties properties) {
		PlatformPlaceholderDatabaseDriverResolver resolver = new PlatformPlaceholderDatabaseDriverResolver();
		for (var platform : IdempotencyJdbcSchemaInitializer.PLATFORMS.entrySet()) {
			resolver = resolver.withDriverPlatform(platform.getKey(), platform.getValue());
		}
		try {
			return StringUtils.hasText(properties.getPlatform())
					? resolver.resolveAll(properties.getPlatform(), SHIPPED_SCRIPT).get(0)
					: resolver.resolveAll(dataSource, SHIPPED_SCRIPT).get(0);
		}
		catch (IllegalStateException ex) {
			return SHIPPED_SCRIPT.replace("@@platform@@", "{postgresql,mysql,h2}");
		}
	}

	private static String renamed(String table) {
		return IdempotencyJdbcSchemaInitializer.SHIPPED_TABLE.equals(table) ? ""
				: " (with " + IdempotencyJdbcSchemaInitializer.SHIPPED_TABLE + " renamed " + table + ")";
	}

}
