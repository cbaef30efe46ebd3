package io.github.idempotency.core;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.IdempotentResultNotStoredException;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Endings that must land the same way in every shape of call (single, batch element,
 * asynchronous result): each case runs through every {@link Shape}.
 */
class EveryShapeEndingsTest {

	private static final String WORKFLOW = "payment";

	private final MemoryIdempotencyStore store = new MemoryIdempotencyStore();

	private final IdempotencyEngine engine = new IdempotencyEngine(this.store, JsonMapper.builder().build(),
			EngineSettings.defaults(), IdempotencyObserver.NONE);

	private final AtomicInteger runs = new AtomicInteger();

	@AfterEach
	void close() {
		this.engine.close();
	}

	@ParameterizedTest
	@EnumSource(Shape.class)
	void aResultThatCannotBeStoredSettlesTheRecordAsFailedSoTheRedeliveryIsNotRunAgain(Shape shape) throws Throwable {
		IdempotentOperation operation = shape.prepare(this.engine, WORKFLOW, Receipt.class, List.of());
		Object first = shape.call(this.engine, operation, "k1", this::unwritableReceipt);
		assertThat(first).isEqualTo(new Receipt(Receipt.UNWRITABLE));
		IdempotencyRecord record = this.store.find(new RecordId(WORKFLOW, "k1")).orElseThrow();
		assertThat(record.status()).isEqualTo(RecordStatus.FAILED);
		assertThat(record.errorType()).isEqualTo(IdempotentResultNotStoredException.class.getName());
		assertThat(record.errorMessage()).contains("Receipt").contains("cannot be stored").contains("cannot be read");
		if (shape.answersAReplayedFailureWithNull()) {
			assertThat(shape.call(this.engine, operation, "k1", this::unwritableReceipt)).isNull();
		}
		else {
			assertThatExceptionOfType(IdempotentFailureReplayedException.class)
				.isThrownBy(() -> shape.call(this.engine, operation, "k1", this::unwritableReceipt))
				.satisfies((ex) -> assertThat(ex.getOriginalType())
					.isEqualTo(IdempotentResultNotStoredException.class.getName()));
		}
		assertThat(this.runs).hasValue(1);
	}

	private Receipt unwritableReceipt() {
		this.runs.incrementAndGet();
		return new Receipt(Receipt.UNWRITABLE);
	}

	/** A result that Jackson can write, but for one value, whose accessor throws. */
	record Receipt(String id) {

		static final String UNWRITABLE = "unwritable";

		@Override
		public String id() {
			if (UNWRITABLE.equals(this.id)) {
				throw new IllegalStateException("the id cannot be read");
			}
			return this.id;
		}

		@Override
		public boolean equals(Object other) {
			return other instanceof Receipt receipt && receipt.id.equals(this.id);
		}

		@Override
		public int hashCode() {
			return this.id.hashCode();
		}

		@Override
		public String toString() {
			return "Receipt[" + this.id + "]";
		}

	}

}
