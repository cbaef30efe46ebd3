package io.github.idempotency.kafka;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.aop.IdempotentMethodAdapter.Adaptation;
import io.github.idempotency.aop.IdempotentMethodAdapter.BatchArguments;
import io.github.idempotency.aop.IdempotentMethodAdapter.BatchCall;
import io.github.idempotency.aop.IdempotentMethodAdapter.Invocation;
import org.springframework.kafka.support.Acknowledgment;

/**
 * A batch listener: hands the method an {@link Acknowledgment} that speaks in the
 * indexes of the list it receives, and acknowledges what the engine answered.
 */
record BatchAcknowledging(int acknowledgment) implements Adaptation {

	@Override
	public @Nullable Object invoke(@Nullable Object key, @Nullable Object payload, Invocation invocation) {
		throw new IllegalStateException("not a batch call");
	}

	@Override
	public void invokeBatch(BatchCall call) throws Throwable {
		if (!(call.arguments()[this.acknowledgment] instanceof Acknowledgment ack)) {
			call.execute((positions, arguments) -> arguments);
			return;
		}
		Translated[] translated = { null };
		call.execute(new BatchArguments() {

			@Override
			public @Nullable Object[] apply(int[] positions, @Nullable Object[] arguments) {
				translated[0] = new Translated(ack, positions);
				arguments[BatchAcknowledging.this.acknowledgment] = translated[0];
				return arguments;
			}

			@Override
			public int redeliveredFrom() {
				return (translated[0] != null) ? translated[0].nackedAt : -1;
			}

		});
		int last = call.batch().size() - 1;
		if (translated[0] == null) {
			// nothing ran: every record was answered
			ack.acknowledge();
		}
		else if (translated[0].partialToEnd && translated[0].positions[translated[0].positions.length - 1] < last) {
			// the method acknowledged all it received; the records after them were answered
			ack.acknowledge(last);
		}
	}

}
