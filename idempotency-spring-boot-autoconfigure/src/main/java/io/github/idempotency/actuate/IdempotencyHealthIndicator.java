package io.github.idempotency.actuate;

import java.util.Map;

import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Reports whether the idempotency store answers: one {@code find} of a probe record. Its
 * details name the store, up or down: its {@code backend} and where it is (for the
 * starter's stores, {@code address}: Redis's {@code host:port}, the jdbc URL without
 * credentials; the hybrid store's Redis as {@code cache}).
 */
public class IdempotencyHealthIndicator extends AbstractHealthIndicator {

	static final RecordId PROBE = new RecordId("idempotency-health", "probe");

	private final IdempotencyStore store;

	private final Map<String, String> location;

	public IdempotencyHealthIndicator(IdempotencyStore store) {
		this(store, Map.of());
	}

	/**
	 * @param store the store
	 * @param location where the store is, as details ({@code address}, {@code cache})
	 */
	public IdempotencyHealthIndicator(IdempotencyStore store, Map<String, String> location) {
		super("Idempotency store health check failed");
		this.store = store;
		this.location = Map.copyOf(location);
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		// named before the probe, so that a store that is down is named too
		builder.withDetail("backend", this.store.backend()).withDetails(this.location);
		this.store.find(PROBE);
		builder.up();
	}

}
