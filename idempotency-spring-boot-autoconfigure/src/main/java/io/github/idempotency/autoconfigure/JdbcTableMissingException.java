package io.github.idempotency.autoconfigure;

import org.jspecify.annotations.Nullable;

/**
 * The jdbc store's table, or some of its columns, is missing at start: what is missing
 * ({@link #getDescription()}) and how to create it ({@link #getAction()}), which
 * {@link JdbcTableFailureAnalyzer} reports. Thrown by {@link JdbcTableVerifier}.
 */
final class JdbcTableMissingException extends IllegalStateException {

	private final String description;

	private final String action;

	JdbcTableMissingException(String description, String action, @Nullable Throwable cause) {
		super(description + " " + action, cause);
		this.description = description;
		this.action = action;
	}

	String getDescription() {
		return this.description;
	}

	String getAction() {
		return this.action;
	}

}
