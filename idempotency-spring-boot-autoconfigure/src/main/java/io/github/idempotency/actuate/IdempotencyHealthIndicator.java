package io.github.idempotency.actuate;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Reports whether the idempotency store answers: one {@code find} of a probe record.
 */
public class IdempotencyHealthIndicator extends AbstractHealthIndicator {

	static final RecordId PROBE = new RecordId("idempotency-health", "probe");

	private final IdempotencyStore store;

	public IdempotencyHealthIndicator(IdempotencyStore store) {
		super("Idempotency store health check failed");
		this.store = store;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		this.store.find(PROBE);
		builder.up().withDetail("backend", this.store.backend());
	}

}
