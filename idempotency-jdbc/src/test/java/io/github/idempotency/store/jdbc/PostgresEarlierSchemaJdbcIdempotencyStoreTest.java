package io.github.idempotency.store.jdbc;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;

import org.junit.jupiter.api.BeforeAll;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.test.IdempotencyStoreContract;
import io.github.idempotency.testservers.TestDatabases;
import org.springframework.core.io.ClassPathResource;
import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The contract on a table that an earlier version of the schema made, whose keys compare
 * in the database's collation rather than in byte order ({@code COLLATE "C"}): a table
 * in service is never altered, and the store's statements, which compare those columns
 * with parameters of the default collation, work on either.
 */
class PostgresEarlierSchemaJdbcIdempotencyStoreTest extends IdempotencyStoreContract {

	private static final String TABLE = "idempotency_record_earlier_schema";

	@BeforeAll
	static void createTable() throws Exception {
		String current = new ClassPathResource("io/github/idempotency/store/jdbc/schema-postgresql.sql")
			.getContentAsString(StandardCharsets.UTF_8);
		String earlier = current.replace(" COLLATE \"C\"", "").replace("idempotency_record", TABLE);
		assertThat(earlier).isNotEqualTo(current.replace("idempotency_record", TABLE));
		JdbcClient jdbc = JdbcClient.create(TestDatabases.postgres());
		jdbc.sql("DROP TABLE IF EXISTS " + TABLE).update();
		for (String statement : earlier.replaceAll("(?m)^--.*$", "").split(";")) {
			if (!statement.isBlank()) {
				jdbc.sql(statement).update();
			}
		}
	}

	@Override
	protected IdempotencyStore createStore(Clock clock) {
		return new JdbcIdempotencyStore(TestDatabases.postgres(), TABLE, Duration.ofSeconds(5), clock);
	}

}
