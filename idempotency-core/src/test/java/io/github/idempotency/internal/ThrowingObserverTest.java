package io.github.idempotency.internal;

import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.observe.Outcome;
import io.github.idempotency.observe.StoreOperation;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * An application's observer that throws never changes the protocol's outcome: the key is
 * not left claimed by a run that never executed, and duplicates are still answered.
 */
class ThrowingObserverTest {

	private final MemoryIdempotencyStore store = new MemoryIdempotencyStore();

	private final IdempotencyEngine engine = new IdempotencyEngine(this.store, JsonMapper.builder().build(),
			EngineSettings.defaults(), new IdempotencyObserver() {

				@Override
				public void onRequest(String workflow, Outcome outcome) {
					throw new IllegalStateException("meter registry closed");
				}

				@Override
				public void onStoreCall(StoreOperation operation, long nanos, boolean success) {
					throw new IllegalStateException("meter registry closed");
				}

			});

	private final IdempotentOperation operation = this.engine.prepare(OperationDefinition.of("observed", String.class)
		.fingerprinted(false)
		.leaseTtl(Duration.ofSeconds(30))
		.onInProgress(InProgressPolicy.REJECT)
		.build());

	private final AtomicInteger runs = new AtomicInteger();

	@AfterEach
	void close() {
		this.engine.close();
	}

	@Test
	void theOperationRunsOnceAndItsDuplicateIsAnswered() throws Throwable {
		assertThat(this.engine.execute(this.operation, "k1", null, () -> "run-" + this.runs.incrementAndGet()))
			.isEqualTo("run-1");
		assertThat(this.store.find(new RecordId("observed", "k1")).orElseThrow().status())
			.isEqualTo(RecordStatus.COMPLETED);
		assertThat(this.engine.execute(this.operation, "k1", null, () -> "run-" + this.runs.incrementAndGet()))
			.isEqualTo("run-1");
		assertThat(this.runs).hasValue(1);
	}

	@Test
	void aFailureOfTheOperationStillReleasesTheKey() throws Throwable {
		assertThatIllegalArgumentException().isThrownBy(() -> this.engine.execute(this.operation, "k1", null, () -> {
			throw new IllegalArgumentException("card network down");
		}));
		assertThat(this.store.find(new RecordId("observed", "k1"))).isEmpty();
		assertThat(this.engine.execute(this.operation, "k1", null, () -> "retried")).isEqualTo("retried");
	}

}
