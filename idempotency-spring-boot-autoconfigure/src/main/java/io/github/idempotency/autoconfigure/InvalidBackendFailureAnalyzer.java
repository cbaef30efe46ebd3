package io.github.idempotency.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports an {@code idempotency.backend} that names no store ({@link InvalidBackendException}):
 * the value, where it was set, and the values it takes.
 */
final class InvalidBackendFailureAnalyzer extends AbstractFailureAnalyzer<InvalidBackendException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, InvalidBackendException cause) {
		String origin = (cause.getOrigin() != null) ? " (set in " + cause.getOrigin() + ")" : "";
		return new FailureAnalysis("idempotency.backend is '" + cause.getValue() + "'" + origin
				+ ", which names no idempotency store.", "Set idempotency.backend to one of "
						+ InvalidBackendException.backends(", ") + ", or remove it to have the store chosen from the "
						+ "application's beans (jdbc with a DataSource, else r2dbc with a ConnectionFactory, else redis with a "
						+ "RedisConnectionFactory, "
						+ "else memory).", cause);
	}

}
