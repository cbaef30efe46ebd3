package io.github.idempotency.internal;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.InProgressPolicy;

/**
 * An {@link OperationDefinition} checked and resolved against the engine's settings, ready
 * to run many times. Created by {@link IdempotencyEngine#prepare(OperationDefinition)}.
 */
public final class IdempotentOperation {

	private final String workflow;

	private final ResultCodec codec;

	private final @Nullable AsyncResult async;

	private final boolean fingerprinted;

	private final Duration leaseTtl;

	private final Duration retention;

	private final InProgressPolicy onInProgress;

	private final PermanentFailures permanentFailures;

	IdempotentOperation(OperationDefinition definition, ResultCodec codec, @Nullable AsyncResult async,
			EngineSettings settings) {
		this.workflow = definition.workflow();
		this.codec = codec;
		this.async = async;
		this.fingerprinted = definition.fingerprinted();
		this.leaseTtl = (definition.leaseTtl() != null) ? definition.leaseTtl() : settings.leaseTtl();
		this.retention = (definition.retention() != null) ? definition.retention() : settings.retention();
		this.onInProgress = (definition.onInProgress() != InProgressPolicy.DEFAULT) ? definition.onInProgress()
				: settings.onInProgress();
		this.permanentFailures = PermanentFailures.of(definition.recordFailureFor());
	}

	public String workflow() {
		return this.workflow;
	}

	ResultCodec codec() {
		return this.codec;
	}

	/**
	 * How a result that arrives after the call returns is followed.
	 * @return the asynchronous shape, or {@code null} for a synchronous result
	 */
	@Nullable AsyncResult async() {
		return this.async;
	}

	boolean fingerprinted() {
		return this.fingerprinted;
	}

	Duration leaseTtl() {
		return this.leaseTtl;
	}

	Duration retention() {
		return this.retention;
	}

	InProgressPolicy onInProgress() {
		return this.onInProgress;
	}

	boolean isPermanentFailure(Throwable ex) {
		return this.permanentFailures.includes(ex);
	}

}
