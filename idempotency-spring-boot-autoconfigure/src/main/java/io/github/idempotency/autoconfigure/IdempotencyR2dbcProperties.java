package io.github.idempotency.autoconfigure;

import java.time.Duration;

import io.github.idempotency.store.ReadFirst;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.boot.sql.init.DatabaseInitializationMode;

/**
 * Configuration of the r2dbc idempotency store: the jdbc store's table, reached through the
 * application's R2DBC {@code ConnectionFactory}.
 */
@ConfigurationProperties("idempotency.r2dbc")
public class IdempotencyR2dbcProperties {

	/**
	 * Name of the table of idempotency records, optionally schema-qualified
	 * ('schema.table'); the jdbc store's table, created by its shipped schema scripts.
	 */
	private String tableName = "idempotency_record";

	/**
	 * How long a claim waits for a row that another transaction has inserted or locked
	 * before it counts the key as in progress.
	 */
	private Duration lockTimeout = Duration.ofSeconds(10);

	/**
	 * Whether a claim outside a transaction reads the record with a plain primary-key
	 * SELECT before its claim statement: 'never', 'always', or 'adaptive' (per workflow, as
	 * the jdbc store's idempotency.jdbc.read-first).
	 */
	private ReadFirst readFirst = ReadFirst.ADAPTIVE;

	/**
	 * When the table is created at start-up from the jdbc store's shipped schema script for
	 * the database (PostgreSQL, or MariaDB's MySQL script), under the configured table
	 * name: 'always', or 'embedded' and 'never', which create nothing (neither database is
	 * embedded).
	 */
	private DatabaseInitializationMode initializeSchema = DatabaseInitializationMode.EMBEDDED;

	/**
	 * The scheduled deletion of expired records: the jdbc store's settings, and its pace.
	 */
	@NestedConfigurationProperty
	private final IdempotencyJdbcProperties.Cleanup cleanup = new IdempotencyJdbcProperties.Cleanup();

	public String getTableName() {
		return this.tableName;
	}

	public void setTableName(String tableName) {
		this.tableName = tableName;
	}

	public Duration getLockTimeout() {
		return this.lockTimeout;
	}

	public void setLockTimeout(Duration lockTimeout) {
		this.lockTimeout = lockTimeout;
	}

	public ReadFirst getReadFirst() {
		return this.readFirst;
	}

	public void setReadFirst(ReadFirst readFirst) {
		this.readFirst = readFirst;
	}

	public DatabaseInitializationMode getInitializeSchema() {
		return this.initializeSchema;
	}

	public void setInitializeSchema(DatabaseInitializationMode initializeSchema) {
		this.initializeSchema = initializeSchema;
	}

	public IdempotencyJdbcProperties.Cleanup getCleanup() {
		return this.cleanup;
	}

}
