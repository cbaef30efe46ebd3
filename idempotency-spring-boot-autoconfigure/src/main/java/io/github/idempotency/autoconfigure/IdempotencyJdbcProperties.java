package io.github.idempotency.autoconfigure;

import io.github.idempotency.store.ReadFirst;
import java.time.Duration;


import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.jdbc.init.DatabaseInitializationProperties;

/**
 * Configuration of the jdbc idempotency store. Inherits {@code initialize-schema}
 * (embedded, always, never), {@code schema}, {@code platform} and
 * {@code continue-on-error} from Spring Boot's database initialization properties.
 */
@ConfigurationProperties("idempotency.jdbc")
public class IdempotencyJdbcProperties extends DatabaseInitializationProperties {

	private static final String DEFAULT_SCHEMA_LOCATION = "classpath:io/github/idempotency/store/jdbc/schema-@@platform@@.sql";

	/**
	 * Name of the table of idempotency records, optionally schema-qualified
	 * ('schema.table'). The shipped schema script creates the table under this name (and
	 * its index as '<table>_expires_at'); a script of your own (idempotency.jdbc.schema)
	 * runs as it is.
	 */
	private String tableName = "idempotency_record";

	/**
	 * How long a claim waits for a row that another transaction has inserted or locked
	 * before it counts the key as in progress.
	 */
	private Duration lockTimeout = Duration.ofSeconds(10);

	/**
	 * Whether a claim outside a transaction reads the record with a plain primary-key
	 * SELECT before its claim statement, so that a duplicate costs one read: 'never',
	 * 'always', or 'adaptive' (per workflow, while at least 70% of its recent claims found a
	 * record; below 25% a claim on PostgreSQL is a plain insert, the record read only when it
	 * exists, inside a transaction too).
	 */
	private ReadFirst readFirst = ReadFirst.ADAPTIVE;

	private final Cleanup cleanup = new Cleanup();

	@Override
	public String getDefaultSchemaLocation() {
		return DEFAULT_SCHEMA_LOCATION;
	}

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

	public Cleanup getCleanup() {
		return this.cleanup;
	}

	/**
	 * The scheduled deletion of expired records.
	 */
	public static class Cleanup {

		/**
		 * How often expired records are deleted; 0 turns the cleanup off.
		 */
		private Duration interval = Duration.ofHours(1);

		/**
		 * The most records one delete statement removes.
		 */
		private int batchSize = 1000;

		/**
		 * The share of the time a run may keep the database busy deleting: after a batch that
		 * took t, the run pauses t * (1 - duty-cycle) / duty-cycle (0.2: four times the
		 * batch's time). A busier database makes both longer. 1 never pauses.
		 */
		private double dutyCycle = 0.2;

		/**
		 * The most records a run deletes per second (a pause after each batch keeps it
		 * there), a fifth more than the 1,000 a second (86.4 M a day) the cleanup is
		 * measured to keep up with; 0 for no limit but the duty cycle. Raise it where records
		 * arrive faster (a run longer than the interval says so in a WARN line).
		 */
		private int maxRowsPerSecond = 1200;

		public Duration getInterval() {
			return this.interval;
		}

		public void setInterval(Duration interval) {
			this.interval = interval;
		}

		public int getBatchSize() {
			return this.batchSize;
		}

		public void setBatchSize(int batchSize) {
			this.batchSize = batchSize;
		}

		public double getDutyCycle() {
			return this.dutyCycle;
		}

		public void setDutyCycle(double dutyCycle) {
			this.dutyCycle = dutyCycle;
		}

		public int getMaxRowsPerSecond() {
			return this.maxRowsPerSecond;
		}

		public void setMaxRowsPerSecond(int maxRowsPerSecond) {
			this.maxRowsPerSecond = maxRowsPerSecond;
		}

	}

}
