package io.github.idempotency.internal;

import org.springframework.dao.NonTransientDataAccessException;
import org.springframework.dao.NonTransientDataAccessResourceException;
import org.springframework.dao.UncategorizedDataAccessException;
import org.springframework.util.ClassUtils;

/**
 * Which store errors no retry can fix: refusals, and permanent errors in Spring's data
 * access exception hierarchy (read without requiring spring-tx, where it lives).
 */
final class StoreErrors {

	private static final boolean PRESENT = ClassUtils.isPresent("org.springframework.dao.DataAccessException",
			StoreErrors.class.getClassLoader());

	private StoreErrors() {
	}

	/**
	 * Whether retrying cannot help: a non-transient data access error that Spring could
	 * categorize (a constraint, a malformed statement). Not a resource failure (a refused
	 * or broken connection, which Spring also counts as non-transient but which passes),
	 * and not an uncategorized one: a driver's batch wraps a statement timeout that way.
	 * @param failure what the store threw
	 * @return {@code true} when the same call would fail again
	 */
	static boolean isPermanent(RuntimeException failure) {
		return PRESENT && Dao.isPermanent(failure);
	}

	/**
	 * Whether a failed call is the store refusing it (a misuse such as a claim inside a
	 * read-only transaction) rather than the store being unreachable: never a reason to run
	 * unprotected, and not worth a retry.
	 * @param failure what the store threw
	 * @return {@code true} for a refusal
	 */
	static boolean isRefusal(RuntimeException failure) {
		return failure instanceof IllegalStateException || failure instanceof IllegalArgumentException;
	}

	/** Loaded only when spring-tx is there. */
	private static final class Dao {

		static boolean isPermanent(RuntimeException failure) {
			return failure instanceof NonTransientDataAccessException
					&& !(failure instanceof NonTransientDataAccessResourceException)
					&& !(failure instanceof UncategorizedDataAccessException);
		}

	}

}
