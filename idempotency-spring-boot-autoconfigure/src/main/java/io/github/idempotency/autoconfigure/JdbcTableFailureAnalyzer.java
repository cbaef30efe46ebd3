package io.github.idempotency.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports a missing jdbc store table or column ({@link JdbcTableMissingException}) as the
 * start-up failure it is: what is missing, and the two ways to create it.
 */
final class JdbcTableFailureAnalyzer extends AbstractFailureAnalyzer<JdbcTableMissingException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, JdbcTableMissingException cause) {
		return new FailureAnalysis(cause.getDescription(), cause.getAction(), cause);
	}

}
