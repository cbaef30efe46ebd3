package io.github.idempotency.internal;

import java.lang.reflect.Type;
import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.InProgressPolicy;

/**
 * What is fixed for every call of one idempotent method (or template request shape):
 * everything but the key and the payload. {@code null} and {@code DEFAULT} values fall back
 * to the engine's settings. Built by name: {@code OperationDefinition.of(workflow,
 * resultType).onInProgress(WAIT).build()}.
 *
 * @param workflow the scope of the keys
 * @param resultType the declared (generic) result type; {@code void.class} stores nothing
 * @param fingerprinted whether a payload is fingerprinted
 * @param leaseTtl the lease, or {@code null}
 * @param retention the retention, or {@code null}
 * @param onInProgress what to do on a conflict
 * @param recordFailureFor the permanent failure types
 */
public record OperationDefinition(String workflow, Type resultType, boolean fingerprinted,
		@Nullable Duration leaseTtl, @Nullable Duration retention, InProgressPolicy onInProgress,
		List<Class<? extends Throwable>> recordFailureFor) {

	public OperationDefinition {
		recordFailureFor = List.copyOf(recordFailureFor);
	}

	/**
	 * A definition of {@code workflow} whose results are {@code resultType}: fingerprinted,
	 * with the engine's lease, retention and in-progress policy, and no permanent failures
	 * until the builder says otherwise.
	 * @param workflow the scope of the keys
	 * @param resultType the declared (generic) result type
	 * @return a builder
	 */
	public static Builder of(String workflow, Type resultType) {
		return new Builder(workflow, resultType);
	}

	/**
	 * Builds an {@link OperationDefinition} by name.
	 */
	public static final class Builder {

		private final String workflow;

		private final Type resultType;

		private boolean fingerprinted = true;

		private @Nullable Duration leaseTtl;

		private @Nullable Duration retention;

		private InProgressPolicy onInProgress = InProgressPolicy.DEFAULT;

		private List<Class<? extends Throwable>> recordFailureFor = List.of();

		private Builder(String workflow, Type resultType) {
			this.workflow = workflow;
			this.resultType = resultType;
		}

		public Builder fingerprinted(boolean fingerprinted) {
			this.fingerprinted = fingerprinted;
			return this;
		}

		public Builder leaseTtl(@Nullable Duration leaseTtl) {
			this.leaseTtl = leaseTtl;
			return this;
		}

		public Builder retention(@Nullable Duration retention) {
			this.retention = retention;
			return this;
		}

		public Builder onInProgress(InProgressPolicy onInProgress) {
			this.onInProgress = onInProgress;
			return this;
		}

		public Builder recordFailureFor(List<Class<? extends Throwable>> recordFailureFor) {
			this.recordFailureFor = recordFailureFor;
			return this;
		}

		public OperationDefinition build() {
			return new OperationDefinition(this.workflow, this.resultType, this.fingerprinted, this.leaseTtl,
					this.retention, this.onInProgress, this.recordFailureFor);
		}

	}

}
