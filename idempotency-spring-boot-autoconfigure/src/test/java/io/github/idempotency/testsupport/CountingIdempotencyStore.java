package io.github.idempotency.testsupport;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;

/**
 * Wraps a real store and counts the calls made to it, by operation name, so tests can
 * assert the cost of each path.
 */
public final class CountingIdempotencyStore implements IdempotencyStore {

	private final IdempotencyStore delegate;

	private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

	public CountingIdempotencyStore(IdempotencyStore delegate) {
		this.delegate = delegate;
	}

	public int calls(String operation) {
		AtomicInteger count = this.calls.get(operation);
		return (count != null) ? count.get() : 0;
	}

	public int totalCalls() {
		return this.calls.values().stream().mapToInt(AtomicInteger::get).sum();
	}

	public void reset() {
		this.calls.clear();
	}

	private void count(String operation) {
		this.calls.computeIfAbsent(operation, (name) -> new AtomicInteger()).incrementAndGet();
	}

	@Override
	public ClaimResult claim(ClaimRequest request) {
		count("claim");
		return this.delegate.claim(request);
	}

	@Override
	public boolean complete(RecordId id, String owner, @Nullable String response, Duration retention) {
		count("complete");
		return this.delegate.complete(id, owner, response, retention);
	}

	@Override
	public boolean fail(RecordId id, String owner, String errorType, @Nullable String errorMessage,
			Duration retention) {
		count("fail");
		return this.delegate.fail(id, owner, errorType, errorMessage, retention);
	}

	@Override
	public boolean release(RecordId id, String owner) {
		count("release");
		return this.delegate.release(id, owner);
	}

	@Override
	public boolean renew(RecordId id, String owner, Duration leaseTtl) {
		count("renew");
		return this.delegate.renew(id, owner, leaseTtl);
	}

	@Override
	public boolean saveRecoveryPoint(RecordId id, String owner, String recoveryPoint, Duration leaseTtl) {
		count("saveRecoveryPoint");
		return this.delegate.saveRecoveryPoint(id, owner, recoveryPoint, leaseTtl);
	}

	@Override
	public Optional<IdempotencyRecord> find(RecordId id) {
		count("find");
		return this.delegate.find(id);
	}

	@Override
	public boolean delete(RecordId id) {
		count("delete");
		return this.delegate.delete(id);
	}

	@Override
	public String backend() {
		return this.delegate.backend();
	}

}
