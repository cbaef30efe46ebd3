package io.github.idempotency.store.sql;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Which statement source each database gets, and what it says it can do.
 */
class SqlStatementsTest {

	private static final Duration LOCK_TIMEOUT = Duration.ofMillis(4321);

	@Test
	void eachSupportedDatabaseGetsItsOwnStatements() {
		assertThat(of("PostgreSQL 16.4 jdbc:postgresql://localhost/test")).isInstanceOf(PostgreSqlStatements.class);
		assertThat(of("MariaDB 11.4.2-MariaDB jdbc:mariadb://localhost/test")).isInstanceOf(MariaDbStatements.class);
		assertThat(of("MySQL 8.4.0 jdbc:mysql://localhost/test")).isExactlyInstanceOf(MySqlStatements.class);
		assertThat(of("H2 2.3.232 jdbc:h2:mem:test")).isInstanceOf(H2Statements.class);
		assertThatIllegalStateException().isThrownBy(() -> of("Oracle 23 jdbc:oracle:thin:@localhost"))
			.withMessageContaining("Oracle");
	}

	@Test
	void postgresqlClaimsAndCompletesInOneStatementAndBoundsItsOwnLockWaits() {
		SqlStatements statements = of("PostgreSQL");
		assertThat(statements.claim()).isInstanceOf(ClaimSql.ReadOrInsert.class);
		assertThat(statements.batchClaim()).isInstanceOf(BatchClaimSql.OverArrays.class);
		assertThat(statements.batchCompletion()).isInstanceOf(BatchCompletionSql.OverArrays.class);
		assertThat(statements.lockWaits()).isInstanceOfSatisfying(LockWaits.InStatement.class,
				(bound) -> assertThat(bound.completeLeased()).contains("set_config('lock_timeout', '4321ms', true)"));
		assertThat(statements.insertInTransaction().countsInARow()).isTrue();
	}

	@Test
	void mariadbUpsertsOutsideATransactionAndCountsCompletions() {
		SqlStatements statements = of("MariaDB");
		assertThat(statements.claim()).isInstanceOf(ClaimSql.UpsertOutsideTransaction.class);
		assertThat(statements.batchClaim()).isInstanceOf(BatchClaimSql.Upsert.class);
		assertThat(statements.batchCompletion()).isInstanceOf(BatchCompletionSql.Counted.class);
		assertThat(statements.lockWaits()).isInstanceOf(LockWaits.ByQueryTimeout.class);
		assertThat(statements.insert()).startsWith("SET STATEMENT innodb_lock_wait_timeout = 4 FOR INSERT INTO t ");
	}

	@Test
	void mysqlAndH2InsertThenRead() {
		for (SqlStatements statements : List.of(of("MySQL"), of("H2"))) {
			assertThat(statements.claim()).isInstanceOf(ClaimSql.InsertThenRead.class);
			assertThat(statements.batchClaim()).isInstanceOf(BatchClaimSql.ReadThenInsert.class);
			assertThat(statements.batchCompletion()).isInstanceOf(BatchCompletionSql.OneByOne.class);
			assertThat(statements.lockWaits()).isInstanceOf(LockWaits.ByQueryTimeout.class);
			assertThat(statements.insert()).startsWith("INSERT INTO t ");
		}
	}

	@Test
	void aStatementIsOneLineWhateverItsTextBlock() {
		for (String product : List.of("PostgreSQL", "MariaDB", "MySQL", "H2")) {
			SqlStatements statements = of(product);
			assertThat(List.of(statements.insert(), statements.select(), statements.complete(Fence.LEASE),
					statements.takeOver(), statements.deleteExpired(), statements.selectAll().apply(2)))
				.allSatisfy((sql) -> assertThat(sql).doesNotContain("\n").doesNotContain("  ").doesNotContain("{"));
		}
	}

	private static SqlStatements of(String product) {
		return SqlStatements.of(product, "t", LOCK_TIMEOUT);
	}

}
