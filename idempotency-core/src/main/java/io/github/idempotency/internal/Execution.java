package io.github.idempotency.internal;

import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.observe.StoreOperation;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotencyContext;
import io.github.idempotency.IdempotencyLeaseLostException;
import io.github.idempotency.IdempotencyStoreException;
import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordId;
import org.springframework.util.Assert;

/**
 * One run of an idempotent operation that holds (or, fail-open, pretends to hold) a claim:
 * the {@link IdempotencyContext} its code sees.
 */
final class Execution extends IdempotencyContext {

	private final StoreCalls calls;

	private final IdempotencyObserver observer;

	private final IdempotentOperation operation;

	private final RecordId id;

	private final @Nullable ClaimHandle claim;

	private final int attempt;

	private final @Nullable String owner;

	private volatile @Nullable String recoveryPoint;

	private volatile boolean leaseLost;

	/**
	 * The key of the run in the Reactor context a method's {@code Mono} is subscribed with
	 * ({@link IdempotencyContextAccessor}).
	 */
	static final String CONTEXT_KEY = "io.github.idempotency.IdempotencyContext";

	private volatile LeaseRenewer.@Nullable Lease lease;

	/**
	 * @param claim the claim this run holds, {@code null} for a run the store does not
	 * protect (fail-open)
	 * @param owner the owner of that claim, {@code null} with no claim
	 * @param claimed the record as the claim left it, {@code null} with no claim
	 */
	Execution(StoreCalls calls, IdempotencyObserver observer, IdempotentOperation operation, RecordId id,
			@Nullable ClaimHandle claim, @Nullable String owner, @Nullable IdempotencyRecord claimed) {
		this.calls = calls;
		this.observer = observer;
		this.operation = operation;
		this.id = id;
		this.claim = claim;
		this.attempt = (claimed != null) ? claimed.attempt() : 1;
		this.owner = owner;
		this.recoveryPoint = (claimed != null) ? claimed.recoveryPoint() : null;
	}

	@Nullable IdempotencyContext bind() {
		return makeCurrent();
	}

	void unbind(@Nullable IdempotencyContext previous) {
		restoreCurrent(previous);
	}

	@Override
	public String key() {
		return this.id.key();
	}

	@Override
	public String workflow() {
		return this.id.workflow();
	}

	@Override
	public int attempt() {
		return this.attempt;
	}

	@Override
	public Optional<String> recoveryPoint() {
		return Optional.ofNullable(this.recoveryPoint);
	}

	@Override
	public void saveRecoveryPoint(String recoveryPoint) {
		ClaimHandle claim = this.claim;
		if (claim != null) {
			boolean saved;
			try {
				saved = this.calls.timed(StoreOperation.RENEW, () -> claim.saveRecoveryPoint(recoveryPoint));
			}
			catch (RuntimeException ex) {
				throw new IdempotencyStoreException("Could not save the recovery point of " + this.id
						+ "; the operation stops before its next step", ex);
			}
			if (!saved) {
				throw leaseLost(this.observer, "its recovery point was not saved");
			}
		}
		this.recoveryPoint = recoveryPoint;
	}

	RecordId id() {
		return this.id;
	}

	/**
	 * The owner of the claim this run holds.
	 * @return the owner, {@code null} for a run the store does not protect
	 */
	@Nullable String owner() {
		return this.owner;
	}

	/**
	 * The claim this run holds (only called for a run that holds one).
	 */
	ClaimHandle claim() {
		Assert.state(this.claim != null, "Not a claimed run");
		return this.claim;
	}

	/**
	 * The lease renewal of this run, once registered.
	 */
	LeaseRenewer.@Nullable Lease lease() {
		return this.lease;
	}

	void lease(LeaseRenewer.@Nullable Lease lease) {
		this.lease = lease;
	}

	IdempotentOperation operation() {
		return this.operation;
	}

	/**
	 * The exception that says this run's claim was taken over; the loss is counted by
	 * {@code observer} the first time only.
	 * @param observer counts the loss
	 * @param consequence what did not happen because of it
	 * @return the exception to throw or add
	 */
	IdempotencyLeaseLostException leaseLost(IdempotencyObserver observer, String consequence) {
		if (!this.leaseLost) {
			this.leaseLost = true;
			observer.onLeaseLost(workflow());
		}
		return new IdempotencyLeaseLostException("The claim of " + id() + " (attempt " + attempt()
				+ ") was taken over by another run; " + consequence);
	}

}
