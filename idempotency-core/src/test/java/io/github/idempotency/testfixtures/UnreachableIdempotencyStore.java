package io.github.idempotency.testfixtures;

import java.util.Optional;

import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import org.springframework.dao.DataAccessResourceFailureException;

/**
 * A store whose server cannot be reached: every step throws what Spring's clients throw on a
 * refused connection. For the engine's own tests; stores' outages are tested on real servers.
 */
public final class UnreachableIdempotencyStore implements IdempotencyStore {

	private final String backend;

	public UnreachableIdempotencyStore(String backend) {
		this.backend = backend;
	}

	private static DataAccessResourceFailureException refused() {
		return new DataAccessResourceFailureException("connection refused");
	}

	@Override
	public ClaimResult claim(ClaimRequest request) {
		throw refused();
	}

	@Override
	public Optional<IdempotencyRecord> find(RecordId id) {
		throw refused();
	}

	@Override
	public boolean delete(RecordId id) {
		throw refused();
	}

	@Override
	public String backend() {
		return this.backend;
	}

}
