package io.github.idempotency.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.idempotency.testservers.TestServers;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On the shared PostgreSQL database every test works in a schema of its own (the
 * connection's {@code currentSchema}), dropped afterwards.
 */
class PostgresJdbcStoreTableTest extends JdbcStoreTableTests {

	private final List<String> schemas = new ArrayList<>();

	private final String schema = createSchema();

	@Override
	protected String url() {
		String server = TestServers.postgresUrl();
		return server + (server.contains("?") ? "&" : "?") + "currentSchema=" + this.schema;
	}

	@Override
	protected String platform() {
		return "postgresql";
	}

	@Test
	void withTheDefaultInitializationOnAServerDatabaseTheStartFailsNamingTheTable() {
		runner().run((context) -> {
			assertThat(context).hasFailed();
			assertThat(tableFailure(context)).contains("table 'idempotency_record' does not exist")
				.contains("idempotency.jdbc.initialize-schema=always")
				.contains("io/github/idempotency/store/jdbc/schema-postgresql.sql");
		});
	}

	@Test
	void withAlwaysTheKeysCompareInByteOrder() {
		runner().withPropertyValues("idempotency.jdbc.initialize-schema=always").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(server().sql("SELECT column_name, collation_name FROM information_schema.columns "
					+ "WHERE table_schema = ? AND table_name = 'idempotency_record' "
					+ "AND column_name IN ('workflow', 'idempotency_key')")
				.param(this.schema)
				.query((rs, row) -> rs.getString(1) + " " + rs.getString(2))
				.list()).containsExactlyInAnyOrder("workflow C", "idempotency_key C");
		});
	}

	@AfterEach
	void dropSchemas() {
		this.schemas.forEach((name) -> server().sql("DROP SCHEMA " + name + " CASCADE").update());
	}

	/**
	 * @return the name of a new, empty schema, dropped after the test
	 */
	@Override
	protected String createSchema() {
		String name = "idem_" + UUID.randomUUID().toString().replace("-", "");
		server().sql("CREATE SCHEMA " + name).update();
		this.schemas.add(name);
		return name;
	}

	private static JdbcClient server() {
		return JdbcClient.create(new DriverManagerDataSource(TestServers.postgresUrl()));
	}

}
