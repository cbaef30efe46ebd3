package io.github.idempotency.testservers;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;

import org.springframework.core.io.ClassPathResource;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;

/**
 * Pooled data sources on the test databases, with the store's table created from the
 * schema file the jar ships for the platform. One pool per database for the whole run.
 */
public final class TestDatabases {

	private static final Map<String, DataSource> pools = new ConcurrentHashMap<>();

	private TestDatabases() {
	}

	public static DataSource postgres() {
		return pool(TestServers.postgresUrl(), "postgresql");
	}

	public static DataSource mariaDb() {
		return pool(TestServers.mariaDbUrl(), "mysql");
	}

	/**
	 * MariaDB with server-side prepared statements ({@code useServerPrepStmts=true}), the
	 * setting docs/stores.md recommends: statements in MariaDB's binary protocol, their
	 * result's columns described once per connection.
	 */
	public static DataSource mariaDbServerPrepared() {
		String url = TestServers.mariaDbUrl();
		return pool(url + (url.contains("?") ? "&" : "?") + "useServerPrepStmts=true", "mysql");
	}

	/**
	 * A pool on the database {@code url} names whose connections start with auto-commit off
	 * ({@code spring.datasource.hikari.auto-commit=false}, a setting often recommended with
	 * JPA), the store's table created as for the others.
	 * @param url the JDBC URL ({@link TestServers#postgresUrl()}, {@link TestServers#mariaDbUrl()})
	 * @param platform the schema file's platform
	 */
	public static DataSource withoutAutoCommit(String url, String platform) {
		pool(url, platform);
		return pools.computeIfAbsent("without-auto-commit:" + url, (key) -> {
			HikariDataSource dataSource = new HikariDataSource();
			dataSource.setJdbcUrl(url);
			dataSource.setAutoCommit(false);
			dataSource.setMaximumPoolSize(8);
			dataSource.setPoolName("test-" + platform + "-without-auto-commit");
			return dataSource;
		});
	}

	public static DataSource h2() {
		return pool("jdbc:h2:mem:idempotency;DB_CLOSE_DELAY=-1", "h2");
	}

	/**
	 * Creates a table of the store's schema under another name, for tests that count rows.
	 * @param dataSource the database
	 * @param platform the schema file's platform ({@code postgresql}, {@code mysql}, {@code h2})
	 * @param table the table name
	 */
	public static void createTable(DataSource dataSource, String platform, String table) {
		try {
			String schema = new ClassPathResource("io/github/idempotency/store/jdbc/schema-" + platform + ".sql")
				.getContentAsString(java.nio.charset.StandardCharsets.UTF_8)
				.replace("idempotency_record", table);
			org.springframework.jdbc.core.simple.JdbcClient.create(dataSource).sql("DROP TABLE IF EXISTS " + table).update();
			new ResourceDatabasePopulator(new org.springframework.core.io.ByteArrayResource(
					schema.getBytes(java.nio.charset.StandardCharsets.UTF_8)))
				.execute(dataSource);
		}
		catch (java.io.IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
	}

	/**
	 * Drops the store's table when an earlier version of the schema made it, so that the
	 * current schema creates it again: on MariaDB keys of text (compared with trailing
	 * spaces padded) where they are binary now, on PostgreSQL keys in the database's
	 * collation where they compare in byte order ({@code "C"}) now.
	 */
	private static void dropTableOfAnEarlierSchema(DataSource dataSource, String platform) {
		org.springframework.jdbc.core.simple.JdbcClient jdbc = org.springframework.jdbc.core.simple.JdbcClient
			.create(dataSource);
		String earlierKeys = switch (platform) {
			case "mysql" -> "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() "
					+ "AND TABLE_NAME = 'idempotency_record' AND COLUMN_NAME = 'idempotency_key' "
					+ "AND DATA_TYPE <> 'varbinary'";
			case "postgresql" -> "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = current_schema() "
					+ "AND table_name = 'idempotency_record' AND column_name = 'idempotency_key' "
					+ "AND collation_name IS DISTINCT FROM 'C'";
			default -> null;
		};
		if (earlierKeys != null && jdbc.sql(earlierKeys).query(Long.class).single() > 0) {
			jdbc.sql("DROP TABLE idempotency_record").update();
		}
	}

	private static DataSource pool(String url, String platform) {
		return pools.computeIfAbsent(url, (key) -> {
			HikariDataSource dataSource = new HikariDataSource();
			dataSource.setJdbcUrl(url);
			dataSource.setMaximumPoolSize(24);
			dataSource.setPoolName("test-" + platform);
			dropTableOfAnEarlierSchema(dataSource, platform);
			new ResourceDatabasePopulator(
					new ClassPathResource("io/github/idempotency/store/jdbc/schema-" + platform + ".sql"))
				.execute(dataSource);
			return dataSource;
		});
	}

}
