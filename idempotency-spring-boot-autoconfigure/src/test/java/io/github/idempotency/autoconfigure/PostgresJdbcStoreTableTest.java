package io.github.idempotency.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.idempotency.IdempotencyTemplate;
import io.github.idempotency.IdempotentRequest;
import io.github.idempotency.testservers.TestServers;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

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

	/**
	 * The tuning docs/stores.md gives for batches: with the table's fill factor at 40 %, a
	 * batch's claims leave room in their pages for their completions, and each completion
	 * is a HOT update (no new index entry), which it can be only as long as it changes no
	 * indexed column. The server publishes a table's counts once the connections that
	 * wrote go idle (within PostgreSQL's own 10 s).
	 */
	@Test
	void atAFillFactorOf40PercentTheCompletionsOfABatchStayInTheirClaimsPages() {
		runner().withPropertyValues("idempotency.jdbc.initialize-schema=always").run((context) -> {
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			jdbc.sql("ALTER TABLE idempotency_record SET (fillfactor = 40)").update();
			List<IdempotentRequest> batch = new ArrayList<>();
			for (int i = 0; i < 100; i++) {
				batch.add(IdempotentRequest.of("payments", "payment-" + UUID.randomUUID()));
			}
			context.getBean(IdempotencyTemplate.class)
				.executeAll(batch, String.class, (request) -> "{\"receipt\":\"" + request.key() + "\",\"amount\":1000}");
			String counts = "SELECT pg_stat_get_tuples_updated(oid), pg_stat_get_tuples_hot_updated(oid) FROM pg_class "
					+ "WHERE oid = 'idempotency_record'::regclass";
			await().atMost(Duration.ofSeconds(30))
				.until(() -> jdbc.sql(counts).query((rs, row) -> rs.getLong(1)).single(), (updated) -> updated > 0);
			assertThat(jdbc.sql(counts).query((rs, row) -> rs.getLong(1) + " updated, " + rs.getLong(2) + " HOT").single())
				.isEqualTo("100 updated, 100 HOT");
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
