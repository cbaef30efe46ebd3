package io.github.idempotency.store.jdbc;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.dao.InvalidDataAccessApiUsageException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Named statements made positional once: names used twice, in any order, casts left alone.
 */
class PositionalStatementTest {

	private final JdbcClient jdbc = JdbcClient
		.create(new DriverManagerDataSource("jdbc:h2:mem:positional-statement;DB_CLOSE_DELAY=-1"));

	@Test
	void bindsEachNameWhereverTheStatementUsesIt() {
		PositionalStatement statement = new PositionalStatement(
				"SELECT CAST(:b AS VARCHAR) || '-' || CAST(:a AS VARCHAR) || '-' || CAST(:b AS VARCHAR) || ':a'",
				List.of("a", "b", "unused"));
		assertThat(statement).hasToString(
				"SELECT CAST(? AS VARCHAR) || '-' || CAST(? AS VARCHAR) || '-' || CAST(? AS VARCHAR) || ':a'");
		assertThat(statement.on(this.jdbc, "x", "y", "z").query(String.class).single()).isEqualTo("y-x-y:a");
	}

	@Test
	void aNameTheListDoesNotHaveFailsWhenTheStatementIsMade() {
		assertThatExceptionOfType(InvalidDataAccessApiUsageException.class)
			.isThrownBy(() -> new PositionalStatement("SELECT :a, :c", List.of("a", "b")))
			.withMessageContaining("'c'");
	}

}
