package io.github.idempotency.store.jdbc.tx;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordStatus;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.test.context.TestPropertySource;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The same boundaries on a pool whose connections start with auto-commit off
 * ({@code spring.datasource.hikari.auto-commit=false}): without a transaction the store's
 * steps still commit on their own, on a connection of the pool and on one bound to the
 * thread without a transaction ({@code SUPPORTS}). One case differs, and is replaced here:
 * inside another resource's transaction, a connection of the store's data source that the
 * application's own statement bound before the claim looks like a transaction on it (a
 * bound connection with auto-commit off), so the claim would join what that connection
 * never commits; docs/stores.md says so. Here the claim comes first, and is held by its
 * lease. Each database is a small subclass naming its data source.
 */
@TestPropertySource(properties = "spring.datasource.hikari.auto-commit=false")
abstract class PoolWithoutAutoCommitTransactionBoundaryTests extends TransactionBoundaryTests {

	@Override
	@Test
	void aMethodWithoutATransactionOfItsOwnInsideAnotherResourcesTransactionIsHeldByItsLease() {
		AtomicReference<Optional<IdempotencyRecord>> whileRunning = new AtomicReference<>();
		new TransactionTemplate(new DataSourceTransactionManager(otherResource())).executeWithoutResult((status) -> {
			this.payments.plain(key("1"), () -> whileRunning.set(fromAnotherThread("plain", "1")));
			// the claim's connection stays bound to the other transaction, in auto-commit
			JdbcClient.create(this.dataSource).sql("SELECT 1").query(Integer.class).single();
		});
		assertThat(whileRunning.get()).hasValueSatisfying(
				(record) -> assertThat(record.status()).isEqualTo(RecordStatus.IN_PROGRESS));
		assertThat(record("plain", "1").status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(this.payments.effects(key("1"))).isOne();
	}

}
