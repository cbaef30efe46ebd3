package io.github.idempotency.store.r2dbc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;

import io.github.idempotency.testservers.TestServers;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.core.io.ClassPathResource;
import org.springframework.r2dbc.connection.init.ResourceDatabasePopulator;
import org.springframework.r2dbc.core.DatabaseClient;

/**
 * Pooled connection factories on the test databases ({@code TestServers.r2dbcUrl}),
 * with the store's table created from the schema script the jdbc store ships. One pool per
 * database for the whole run.
 */
final class R2dbcTestDatabases {

	private static final Map<String, ConnectionFactory> pools = new ConcurrentHashMap<>();

	private R2dbcTestDatabases() {
	}

	static ConnectionFactory postgres() {
		return pool(TestServers.postgresUrl(), "postgresql");
	}

	static ConnectionFactory mariaDb() {
		return pool(TestServers.mariaDbUrl(), "mysql");
	}

	/**
	 * Creates a table of the store's schema under another name (dropped first), for tests
	 * that count rows.
	 * @param connectionFactory the database
	 * @param platform the schema file's platform ({@code postgresql}, {@code mysql})
	 * @param table the table name
	 */
	static void createTable(ConnectionFactory connectionFactory, String platform, String table) {
		String schema = new String(script(platform), StandardCharsets.UTF_8).replace("idempotency_record", table);
		DatabaseClient.create(connectionFactory).sql("DROP TABLE IF EXISTS " + table).then().block();
		new ResourceDatabasePopulator(new ByteArrayResource(schema.getBytes(StandardCharsets.UTF_8)))
			.populate(connectionFactory)
			.block();
	}

	private static byte[] script(String platform) {
		try {
			return new ClassPathResource("io/github/idempotency/store/jdbc/schema-" + platform + ".sql")
				.getContentAsByteArray();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static ConnectionFactory pool(String jdbcUrl, String platform) {
		return pools.computeIfAbsent(jdbcUrl, (key) -> {
			ConnectionFactory connectionFactory = ConnectionFactories.get(TestServers.r2dbcUrl(jdbcUrl, 24));
			// read here: the populator reads its script on a non-blocking thread, where BlockHound refuses files
			new ResourceDatabasePopulator(new ByteArrayResource(script(platform))).populate(connectionFactory).block();
			return connectionFactory;
		});
	}

}
