package io.github.idempotency.store.r2dbc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;

import io.github.idempotency.testservers.TestServers;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.core.io.ClassPathResource;
import org.springframework.r2dbc.connection.init.ResourceDatabasePopulator;

/**
 * Pooled connection factories on the test databases (their JDBC URLs made R2DBC ones),
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
	 * The R2DBC URL of a JDBC URL, pooled: {@code jdbc:postgresql://host:port/db?user=u&password=p}
	 * becomes {@code r2dbc:pool:postgresql://u:p@host:port/db?maxSize=24} (R2DBC takes the
	 * user and the password only before the host).
	 */
	static String r2dbcUrl(String jdbcUrl) {
		URI uri = URI.create(jdbcUrl.substring("jdbc:".length()));
		String user = null;
		String password = null;
		StringBuilder options = new StringBuilder("maxSize=24");
		if (uri.getRawQuery() != null) {
			for (String option : uri.getRawQuery().split("&")) {
				String[] pair = option.split("=", 2);
				String value = (pair.length > 1) ? pair[1] : "";
				switch (pair[0]) {
					case "user" -> user = value;
					case "password" -> password = value;
					default -> options.append('&').append(option);
				}
			}
		}
		String login = (user != null) ? user + ((password != null) ? ":" + password : "") + "@" : "";
		return "r2dbc:pool:" + uri.getScheme() + "://" + login + uri.getHost() + ((uri.getPort() > 0) ? ":" + uri.getPort() : "")
				+ uri.getRawPath() + "?" + options;
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
			ConnectionFactory connectionFactory = ConnectionFactories.get(r2dbcUrl(jdbcUrl));
			// read here: the populator reads its script on a non-blocking thread, where BlockHound refuses files
			new ResourceDatabasePopulator(new ByteArrayResource(script(platform))).populate(connectionFactory).block();
			return connectionFactory;
		});
	}

}
