package io.github.idempotency.store.jdbc;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.sql.Fence;

/**
 * A claim made outside any transaction on the store's data source, held by its lease:
 * every step is one auto-committed statement on the record, while it is still this
 * claim's and {@code IN_PROGRESS}.
 */
final class LeasedJdbcClaim implements ClaimHandle {

	private final JdbcRecordTable table;

	private final ClaimRequest request;

	LeasedJdbcClaim(JdbcRecordTable table, ClaimRequest request) {
		this.table = table;
		this.request = request;
	}

	@Override
	public boolean complete(@Nullable String response) {
		return this.table.steps().complete(this.request.id(), this.request.owner(), response, this.request.retention(),
				Fence.LEASE);
	}

	JdbcRecordTable table() {
		return this.table;
	}

	ClaimRequest request() {
		return this.request;
	}

	@Override
	public boolean fail(Throwable failure) {
		return this.table.steps().fail(this.request.id(), this.request.owner(), failure, this.request.retention(),
				Fence.LEASE);
	}

	@Override
	public boolean release(Throwable failure) {
		return this.table.steps().release(this.request.id(), this.request.owner(), Fence.LEASE);
	}

	@Override
	public boolean renew() {
		return this.table.steps().extend(this.request.id(), this.request.owner(), null, this.request.leaseTtl(),
				this.request.retention(), Fence.LEASE);
	}

	@Override
	public boolean saveRecoveryPoint(String recoveryPoint) {
		return this.table.steps().extend(this.request.id(), this.request.owner(), recoveryPoint, this.request.leaseTtl(),
				this.request.retention(), Fence.LEASE);
	}

}
