package io.github.idempotency.internal;

import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.BatchFailures;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A method that returned but asked its broker to deliver again (an adapter throws
 * {@link RedeliveryRequested} for it): what comes again is given back, not completed, so
 * that the delivery to come runs it; what came before is completed.
 */
class RedeliveryRequestedTest {

	private final MemoryIdempotencyStore store = new MemoryIdempotencyStore(new ManualTime(Instant.now()));

	private final IdempotencyEngine engine = IdempotencyEngine.builder(this.store, JsonMapper.builder().build()).build();

	private final IdempotentOperation operation = this.engine
		.prepare(OperationDefinition.of("redelivered", String.class).fingerprinted(false).build());

	private final AtomicInteger runs = new AtomicInteger();

	@AfterEach
	void close() {
		this.engine.close();
	}

	@Test
	void aSingleCallIsGivenBackAndAnsweredWithWhatItReturnedThenRunsWhenItComesAgain() throws Throwable {
		assertThat(this.engine.execute(this.operation, "k", null, () -> {
			this.runs.incrementAndGet();
			throw new RedeliveryRequested(0, "asked again");
		})).isEqualTo("asked again");
		assertThat(this.store.find(new RecordId("redelivered", "k"))).isEmpty();
		assertThat(this.engine.execute(this.operation, "k", null, () -> "ran " + this.runs.incrementAndGet()))
			.isEqualTo("ran 2");
		assertThat(status("k")).isEqualTo(RecordStatus.COMPLETED);
	}

	@Test
	void theElementsOfABatchFromTheOneAskedAgainAreGivenBackAndTheOnesBeforeCompleted() throws Throwable {
		List<BatchItem> items = List.of(new BatchItem("a", "a", null), new BatchItem("dup", "dup", null),
				new BatchItem("b", "b", null), new BatchItem("c", "c", null));
		this.engine.execute(this.operation, "dup", null, () -> "done before");
		List<Integer> called = new java.util.ArrayList<>();
		this.engine.executeAll(this.operation, items, BatchFailures.NONE, (positions, results) -> {
			for (int position : positions) {
				called.add(position);
			}
			// the method got a, b, c (the duplicate left out) and asked again from b, its index 1
			throw new RedeliveryRequested(1, null);
		});
		assertThat(called).containsExactly(0, 2, 3);
		assertThat(status("a")).isEqualTo(RecordStatus.COMPLETED);
		assertThat(status("dup")).isEqualTo(RecordStatus.COMPLETED);
		assertThat(this.store.find(new RecordId("redelivered", "b"))).isEmpty();
		assertThat(this.store.find(new RecordId("redelivered", "c"))).isEmpty();
	}

	private RecordStatus status(String key) {
		return this.store.find(new RecordId("redelivered", key)).orElseThrow().status();
	}

}
