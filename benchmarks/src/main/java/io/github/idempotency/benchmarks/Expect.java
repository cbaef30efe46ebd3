package io.github.idempotency.benchmarks;

/**
 * Guards that a benchmark took the path it claims to measure.
 */
final class Expect {

	private Expect() {
	}

	static boolean answer(boolean expected, boolean actual) {
		if (actual != expected) {
			throw new IllegalStateException("Expected " + expected + ": the key was "
					+ (expected ? "already there" : "new"));
		}
		return actual;
	}

}
