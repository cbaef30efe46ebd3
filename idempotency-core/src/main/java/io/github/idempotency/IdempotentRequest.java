package io.github.idempotency;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * One idempotent operation for {@link IdempotencyTemplate}: the programmatic twin of
 * {@link Idempotent}. Immutable; unset values fall back to the {@code idempotency.*}
 * properties.
 *
 * <pre class="code">
 * IdempotentRequest request = IdempotentRequest.of("payment", message.getHeaders().get("idempotency-key"))
 *     .withPayload(message.getPayload())
 *     .withRecordFailureFor(CardDeclinedException.class);
 * </pre>
 *
 * @param workflow the scope of the key
 * @param key the key: a {@code String}, {@code byte[]}, Kafka {@code Header},
 * {@code ByteBuffer}, or any value whose {@code toString()} is the key
 * @param payload what is fingerprinted to catch a reused key, or {@code null}
 * @param leaseTtl the lease duration, or {@code null} for the default
 * @param retention the retention of the finished record, or {@code null} for the default
 * @param onInProgress what to do when the key runs elsewhere
 * @param recordFailureFor exception types stored and replayed as permanent failures
 */
public record IdempotentRequest(String workflow, @Nullable Object key, @Nullable Object payload,
		@Nullable Duration leaseTtl, @Nullable Duration retention, InProgressPolicy onInProgress,
		List<Class<? extends Throwable>> recordFailureFor) {

	public IdempotentRequest {
		Assert.hasText(workflow, "'workflow' must not be blank");
		Assert.notNull(onInProgress, "'onInProgress' must not be null");
		recordFailureFor = List.copyOf(recordFailureFor);
	}

	/**
	 * A request for {@code key} in {@code workflow}, everything else by default.
	 * @param workflow the scope of the key
	 * @param key the key (validated when the request is executed)
	 * @return a new request
	 */
	public static IdempotentRequest of(String workflow, @Nullable Object key) {
		return new IdempotentRequest(workflow, key, null, null, null, InProgressPolicy.DEFAULT, List.of());
	}

	public IdempotentRequest withPayload(@Nullable Object payload) {
		return new IdempotentRequest(this.workflow, this.key, payload, this.leaseTtl, this.retention,
				this.onInProgress, this.recordFailureFor);
	}

	public IdempotentRequest withLeaseTtl(Duration leaseTtl) {
		return new IdempotentRequest(this.workflow, this.key, this.payload, leaseTtl, this.retention,
				this.onInProgress, this.recordFailureFor);
	}

	public IdempotentRequest withRetention(Duration retention) {
		return new IdempotentRequest(this.workflow, this.key, this.payload, this.leaseTtl, retention,
				this.onInProgress, this.recordFailureFor);
	}

	public IdempotentRequest withOnInProgress(InProgressPolicy onInProgress) {
		return new IdempotentRequest(this.workflow, this.key, this.payload, this.leaseTtl, this.retention,
				onInProgress, this.recordFailureFor);
	}

	@SafeVarargs
	public final IdempotentRequest withRecordFailureFor(Class<? extends Throwable>... types) {
		return new IdempotentRequest(this.workflow, this.key, this.payload, this.leaseTtl, this.retention,
				this.onInProgress, List.of(types));
	}

}
