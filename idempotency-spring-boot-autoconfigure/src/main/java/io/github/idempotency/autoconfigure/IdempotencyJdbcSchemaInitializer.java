package io.github.idempotency.autoconfigure;

import java.util.Map;

import javax.sql.DataSource;

import org.springframework.boot.jdbc.DatabaseDriver;
import org.springframework.boot.jdbc.init.PropertiesBasedDataSourceScriptDatabaseInitializer;

/**
 * Creates the jdbc store's table from the schema file the jar ships for the platform,
 * as {@code idempotency.jdbc.initialize-schema} says. MariaDB uses the MySQL schema.
 */
public class IdempotencyJdbcSchemaInitializer
		extends PropertiesBasedDataSourceScriptDatabaseInitializer<IdempotencyJdbcProperties> {

	/**
	 * The platforms whose schema file is another's.
	 */
	static final Map<DatabaseDriver, String> PLATFORMS = Map.of(DatabaseDriver.MARIADB, "mysql");

	/**
	 * The table the shipped schema files create.
	 */
	static final String SHIPPED_TABLE = "idempotency_record";

	public IdempotencyJdbcSchemaInitializer(DataSource dataSource, IdempotencyJdbcProperties properties) {
		super(dataSource, properties, PLATFORMS);
	}

}
