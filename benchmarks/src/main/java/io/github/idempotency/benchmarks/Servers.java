package io.github.idempotency.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.DriverManager;
import java.util.Map;
import java.util.Properties;

/**
 * Where the store servers are, found as the project's tests find them, but never in a
 * container: the address the environment names ({@code IDEMPOTENCY_TEST_POSTGRES_URL},
 * {@code IDEMPOTENCY_TEST_REDIS_URL}, {@code IDEMPOTENCY_TEST_MARIADB_URL}); else the standard local address, when a login there
 * succeeds; else it fails and says both. {@code benchmarks/run.sh} runs {@link #main} first.
 */
final class Servers {

	private static Map<String, Object> properties;

	private static String mariadb;

	private Servers() {
	}

	/**
	 * @return the Spring Boot properties that point the benchmarks' contexts at the servers
	 */
	static synchronized Map<String, Object> properties() {
		if (properties == null) {
			properties = Map.of("spring.datasource.url",
					find("IDEMPOTENCY_TEST_POSTGRES_URL", "PostgreSQL",
							"jdbc:postgresql://127.0.0.1:5432/test?user=postgres", Servers::login),
					"spring.data.redis.url",
					find("IDEMPOTENCY_TEST_REDIS_URL", "Redis", "redis://127.0.0.1:6379", Servers::ping));
		}
		return properties;
	}

	/**
	 * @return the JDBC URL of MariaDB, found only for the benchmarks that use it
	 */
	static synchronized String mariadb() {
		if (mariadb == null) {
			mariadb = find("IDEMPOTENCY_TEST_MARIADB_URL", "MariaDB", "jdbc:mariadb://127.0.0.1:3306/test?user=root",
					Servers::login);
		}
		return mariadb;
	}

	/**
	 * Prints where the servers are, or why they cannot be used.
	 * @param args none
	 */
	public static void main(String[] args) {
		try {
			properties().forEach((name, value) -> System.out.println(name + "=" + value));
		}
		catch (IllegalStateException ex) {
			System.err.println(ex.getMessage());
			System.exit(1);
		}
	}

	private static String find(String variable, String server, String local, Login login) {
		String value = System.getenv(variable);
		if (value != null && !value.isBlank()) {
			return value;
		}
		try {
			login.check(local);
			return local;
		}
		catch (Exception ex) {
			throw new IllegalStateException("The benchmarks need " + server + ": set " + variable
					+ " to its address (for example " + variable + "='" + local + "') or run it on its standard "
					+ "local address, " + local + " (there it fails: " + ex + ")", ex);
		}
	}

	private static void login(String url) throws Exception {
		// pgjdbc counts these in seconds, MariaDB Connector/J in milliseconds
		String unit = url.startsWith("jdbc:mariadb:") ? "000" : "";
		Properties timeouts = new Properties();
		timeouts.setProperty("connectTimeout", "2" + unit);
		timeouts.setProperty("loginTimeout", "3");
		timeouts.setProperty("socketTimeout", "10" + unit);
		DriverManager.getConnection(url, timeouts).close();
	}

	private static void ping(String url) throws IOException {
		URI uri = URI.create(url);
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), 1000);
			socket.setSoTimeout(2000);
			socket.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
			InputStream in = socket.getInputStream();
			StringBuilder answer = new StringBuilder();
			for (int c = in.read(); c != -1 && c != '\r' && answer.length() < 200; c = in.read()) {
				answer.append((char) c);
			}
			if (!answer.toString().equals("+PONG")) {
				throw new IOException("answers PING with '" + answer + "', not +PONG");
			}
		}
	}

	@FunctionalInterface
	private interface Login {

		void check(String address) throws Exception;

	}

}
