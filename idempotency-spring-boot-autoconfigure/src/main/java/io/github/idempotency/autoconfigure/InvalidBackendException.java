package io.github.idempotency.autoconfigure;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.origin.Origin;

/**
 * {@code idempotency.backend} names no store: thrown while the store configurations'
 * conditions are evaluated ({@link BackendCondition}), reported by
 * {@link InvalidBackendFailureAnalyzer}.
 */
final class InvalidBackendException extends IllegalStateException {

	private final String value;

	private final @Nullable Origin origin;

	InvalidBackendException(String value, @Nullable Origin origin) {
		super("idempotency.backend='" + value + "' names no backend: use one of [" + backends(", ")
				+ "], or leave it unset to detect the store");
		this.value = value;
		this.origin = origin;
	}

	/**
	 * The backends' names, as the property takes them.
	 */
	static String backends(String separator) {
		return Arrays.stream(IdempotencyBackend.values())
			.map((backend) -> backend.name().toLowerCase(Locale.ROOT))
			.collect(Collectors.joining(separator));
	}

	String getValue() {
		return this.value;
	}

	/**
	 * Where the value was set, when known.
	 */
	@Nullable Origin getOrigin() {
		return this.origin;
	}

}
