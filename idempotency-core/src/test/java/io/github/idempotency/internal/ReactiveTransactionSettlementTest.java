package io.github.idempotency.internal;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.ReactiveIdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.reactive.AbstractReactiveTransactionManager;
import org.springframework.transaction.reactive.GenericReactiveTransaction;
import org.springframework.transaction.reactive.TransactionSynchronizationManager;
import org.springframework.transaction.reactive.TransactionalOperator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * A {@code Mono} operation on a non-blocking store inside the caller's reactive transaction,
 * which its claim does not take part in (the memory store's): it is settled once that
 * transaction has ended, after a commit as it ended, after a rollback or a failed commit as
 * if it never ran, so that the record never says "done" for writes that did not commit.
 */
class ReactiveTransactionSettlementTest {

	private final MemoryIdempotencyStore store = new MemoryIdempotencyStore();

	private final IdempotencyEngine engine = IdempotencyEngine.builder(this.store, JsonMapper.builder().build())
		.reactiveStore(ReactiveIdempotencyStore.of(this.store, Schedulers.immediate()))
		.build();

	private final Transactions transactions = new Transactions();

	private final TransactionalOperator operator = TransactionalOperator.create(this.transactions);

	private final AtomicInteger runs = new AtomicInteger();

	private final IdempotentOperation operation = this.engine.prepare(OperationDefinition
		.of("reactive-tx", new ParameterizedTypeReference<Mono<String>>() {
		}.getType())
		.fingerprinted(false)
		.build());

	@AfterEach
	void close() {
		this.engine.close();
	}

	@Test
	void aCommitStoresTheResultOnceTheTransactionHasCommitted() {
		AtomicReference<RecordStatus> inside = new AtomicReference<>();
		String result = this.operator.transactional(charge("k1").doOnNext((value) -> inside.set(status("k1"))))
			.block(Duration.ofSeconds(10));
		assertThat(result).isEqualTo("charged 1");
		assertThat(inside.get()).as("before the commit").isEqualTo(RecordStatus.IN_PROGRESS);
		assertThat(status("k1")).isEqualTo(RecordStatus.COMPLETED);
		assertThat(charge("k1").block(Duration.ofSeconds(10))).isEqualTo("charged 1");
		assertThat(this.runs).hasValue(1);
	}

	@Test
	void aRollbackGivesTheKeyBackSoTheRetryRunsOnce() {
		assertThatIllegalStateException()
			.isThrownBy(() -> this.operator
				.transactional(charge("k1").then(Mono.error(new IllegalStateException("the caller's write failed"))))
				.block(Duration.ofSeconds(10)));
		assertThat(this.store.find(id("k1"))).isEmpty();
		assertThat(this.operator.transactional(charge("k1")).block(Duration.ofSeconds(10))).isEqualTo("charged 2");
		assertThat(status("k1")).isEqualTo(RecordStatus.COMPLETED);
	}

	@Test
	void aCommitThatFailsGivesTheKeyBackSoTheRetryRunsOnce() {
		this.transactions.failNextCommit();
		assertThatIllegalStateException()
			.isThrownBy(() -> this.operator.transactional(charge("k1")).block(Duration.ofSeconds(10)))
			.withMessageContaining("commit failed");
		assertThat(this.store.find(id("k1"))).isEmpty();
		assertThat(this.operator.transactional(charge("k1")).block(Duration.ofSeconds(10))).isEqualTo("charged 2");
		assertThat(this.runs).hasValue(2);
	}

	@SuppressWarnings("unchecked")
	private Mono<String> charge(String key) {
		try {
			return (Mono<String>) this.engine.execute(this.operation, key, null,
					() -> Mono.fromSupplier(() -> "charged " + this.runs.incrementAndGet()));
		}
		catch (Throwable ex) {
			throw new IllegalStateException(ex);
		}
	}

	private RecordStatus status(String key) {
		return this.store.find(id(key)).map(IdempotencyRecord::status).orElseThrow();
	}

	private static RecordId id(String key) {
		return new RecordId("reactive-tx", key);
	}

	/** A reactive transaction manager with nothing to commit, whose next commit can be made to fail. */
	private static final class Transactions extends AbstractReactiveTransactionManager {

		private volatile boolean failNextCommit;

		void failNextCommit() {
			this.failNextCommit = true;
		}

		@Override
		protected Object doGetTransaction(TransactionSynchronizationManager synchronizationManager) {
			return new Object();
		}

		@Override
		protected Mono<Void> doBegin(TransactionSynchronizationManager synchronizationManager, Object transaction,
				TransactionDefinition definition) {
			return Mono.empty();
		}

		@Override
		protected Mono<Void> doCommit(TransactionSynchronizationManager synchronizationManager,
				GenericReactiveTransaction status) {
			if (this.failNextCommit) {
				this.failNextCommit = false;
				return Mono.error(new IllegalStateException("commit failed"));
			}
			return Mono.empty();
		}

		@Override
		protected Mono<Void> doRollback(TransactionSynchronizationManager synchronizationManager,
				GenericReactiveTransaction status) {
			return Mono.empty();
		}

	}

}
