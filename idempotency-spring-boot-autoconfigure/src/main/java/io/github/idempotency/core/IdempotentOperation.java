package io.github.idempotency.core;

import java.time.Duration;
import java.util.List;

import io.github.idempotency.InProgressPolicy;

/**
 * An {@link OperationDefinition} checked and resolved against the engine's settings, ready
 * to run many times. Created by {@link IdempotencyEngine#prepare(OperationDefinition)}.
 */
public final class IdempotentOperation {

	private final String workflow;

	private final ResultCodec codec;

	private final boolean fingerprinted;

	private final Duration leaseTtl;

	private final Duration retention;

	private final InProgressPolicy onInProgress;

	private final List<Class<? extends Throwable>> recordFailureFor;

	IdempotentOperation(OperationDefinition definition, ResultCodec codec, EngineSettings settings) {
		this.workflow = definition.workflow();
		this.codec = codec;
		this.fingerprinted = definition.fingerprinted();
		this.leaseTtl = (definition.leaseTtl() != null) ? definition.leaseTtl() : settings.leaseTtl();
		this.retention = (definition.retention() != null) ? definition.retention() : settings.retention();
		this.onInProgress = (definition.onInProgress() != InProgressPolicy.DEFAULT) ? definition.onInProgress()
				: settings.onInProgress();
		this.recordFailureFor = definition.recordFailureFor();
	}

	public String workflow() {
		return this.workflow;
	}

	ResultCodec codec() {
		return this.codec;
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
		for (Class<? extends Throwable> type : this.recordFailureFor) {
			if (type.isInstance(ex)) {
				return true;
			}
		}
		return false;
	}

}
