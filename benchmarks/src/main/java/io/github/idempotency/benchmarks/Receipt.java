package io.github.idempotency.benchmarks;

/**
 * The small result every benchmarked operation returns and stores (about 60 bytes of
 * JSON), so that every contender serializes the same thing.
 *
 * @param key the idempotency key
 * @param amountCents the amount charged
 * @param status the outcome
 */
public record Receipt(String key, long amountCents, String status) {

	static Receipt of(String key) {
		return new Receipt(key, 4200, "CHARGED");
	}

}
