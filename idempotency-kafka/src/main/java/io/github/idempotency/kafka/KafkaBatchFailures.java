package io.github.idempotency.kafka;

import java.util.List;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.BatchFailures;
import io.github.idempotency.IdempotencyException;
import org.springframework.kafka.listener.BatchListenerFailedException;
import org.springframework.kafka.support.KafkaUtils;

/**
 * Spring Kafka's way of failing one record of a batch listener,
 * {@link BatchListenerFailedException}, for {@code @Idempotent(batch = ...)} methods. A
 * batch method receives only the records it must run, so the index it reports is
 * translated to the record's position in the batch the container passed: Spring Kafka's
 * {@code DefaultErrorHandler} then commits the records before it and seeks the rest.
 * A record whose key cannot be used (reused with another payload, invalid) fails the
 * batch at that record the same way, with the not-retryable cause, so it goes to the
 * recoverer at once.
 */
public class KafkaBatchFailures implements BatchFailures {

	@Override
	public int failedIndex(Throwable failure, List<?> received) {
		BatchListenerFailedException batchFailure = find(failure);
		if (batchFailure == null) {
			return -1;
		}
		if (batchFailure.getRecord() != null) {
			return indexOf(batchFailure.getRecord(), received);
		}
		int index = batchFailure.getIndex();
		return (index >= 0 && index < received.size()) ? index : -1;
	}

	@Override
	public Throwable cause(Throwable failure) {
		BatchListenerFailedException batchFailure = find(failure);
		return (batchFailure != null && batchFailure.getCause() != null) ? batchFailure.getCause() : failure;
	}

	@Override
	public Throwable translate(Throwable failure, int originalIndex, List<?> original) {
		BatchListenerFailedException batchFailure = find(failure);
		if (batchFailure == null || batchFailure.getRecord() != null) {
			// a record is found in the original batch as it is
			return failure;
		}
		String message = batchFailure.getMessage();
		String suffix = " @-" + batchFailure.getIndex();
		if (message != null && message.endsWith(suffix)) {
			message = message.substring(0, message.length() - suffix.length());
		}
		BatchListenerFailedException translated = (batchFailure.getCause() != null)
				? new BatchListenerFailedException(message, batchFailure.getCause(), originalIndex)
				: new BatchListenerFailedException(message, originalIndex);
		translated.setStackTrace(batchFailure.getStackTrace());
		return translated;
	}

	@Override
	public @Nullable Throwable failAt(int originalIndex, List<?> original, IdempotencyException cause) {
		if (!(original.get(originalIndex) instanceof ConsumerRecord) && KafkaUtils.getConsumerGroupId() == null) {
			// not a Kafka batch listener
			return null;
		}
		return new BatchListenerFailedException(String.valueOf(cause.getMessage()), cause, originalIndex);
	}

	private static @Nullable BatchListenerFailedException find(Throwable failure) {
		Throwable candidate = failure;
		while (candidate != null) {
			if (candidate instanceof BatchListenerFailedException batchFailure) {
				return batchFailure;
			}
			candidate = (candidate.getCause() != candidate) ? candidate.getCause() : null;
		}
		return null;
	}

	private static int indexOf(ConsumerRecord<?, ?> record, List<?> received) {
		for (int i = 0; i < received.size(); i++) {
			if (received.get(i) instanceof ConsumerRecord<?, ?> candidate && candidate.topic().equals(record.topic())
					&& candidate.partition() == record.partition() && candidate.offset() == record.offset()) {
				return i;
			}
		}
		return -1;
	}

}
