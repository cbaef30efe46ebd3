package io.github.idempotency.store.r2dbc;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ReactiveClaimHandle;
import io.github.idempotency.store.sql.Fence;

/**
 * A claim made outside any transaction on the store's {@code ConnectionFactory}, held by its
 * lease: every step is one statement that commits on its own, on the record while it is
 * still this claim's and {@code IN_PROGRESS}.
 */
final class LeasedR2dbcClaim implements ReactiveClaimHandle {

	private final R2dbcRecordTable table;

	private final ClaimRequest request;

	LeasedR2dbcClaim(R2dbcRecordTable table, ClaimRequest request) {
		this.table = table;
		this.request = request;
	}

	R2dbcRecordTable table() {
		return this.table;
	}

	ClaimRequest request() {
		return this.request;
	}

	@Override
	public Mono<Boolean> complete(@Nullable String response) {
		return this.table.steps()
			.complete(this.request.id(), this.request.owner(), response, this.request.retention(), Fence.LEASE);
	}

	@Override
	public Mono<Boolean> fail(Throwable failure) {
		return this.table.steps()
			.fail(this.request.id(), this.request.owner(), failure, this.request.retention(), Fence.LEASE);
	}

	@Override
	public Mono<Boolean> release(Throwable failure) {
		return this.table.steps().release(this.request.id(), this.request.owner(), Fence.LEASE);
	}

	@Override
	public Mono<Boolean> renew() {
		return this.table.steps()
			.extend(this.request.id(), this.request.owner(), null, this.request.leaseTtl(), this.request.retention(),
					Fence.LEASE);
	}

	@Override
	public Mono<Boolean> saveRecoveryPoint(String recoveryPoint) {
		return this.table.steps()
			.extend(this.request.id(), this.request.owner(), recoveryPoint, this.request.leaseTtl(),
					this.request.retention(), Fence.LEASE);
	}

}
