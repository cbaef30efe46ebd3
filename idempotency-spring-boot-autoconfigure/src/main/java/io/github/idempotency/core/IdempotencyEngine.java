package io.github.idempotency.core;

import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotencyContext;
import io.github.idempotency.IdempotencyException;
import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.IdempotencyKeyReusedException;
import io.github.idempotency.IdempotencyLeaseLostException;
import io.github.idempotency.IdempotencyStoreException;
import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.InvalidIdempotencyKeyException;
import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;

/**
 * Runs the idempotency protocol against an {@link IdempotencyStore}: claim, then run the
 * operation and complete, fail or release; renew the lease while it runs; wait on or
 * reject a conflict; replay duplicates and permanent failures. Backend-neutral: the store
 * only answers atomic steps. The annotation aspect and {@code IdempotencyTemplate} both
 * come here.
 */
public final class IdempotencyEngine implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(IdempotencyEngine.class);

	private static final long FIRST_BACKOFF = TimeUnit.MILLISECONDS.toNanos(5);

	private static final long MAX_BACKOFF = TimeUnit.MILLISECONDS.toNanos(500);

	private final IdempotencyStore store;

	private final JsonMapper jsonMapper;

	private final EngineSettings settings;

	private final IdempotencyObserver observer;

	private final IdempotencyKeys keys;

	private final Fingerprints fingerprints;

	private final LeaseRenewer renewer;

	private final String instanceId = UUID.randomUUID().toString();

	private final AtomicLong claims = new AtomicLong();

	public IdempotencyEngine(IdempotencyStore store, JsonMapper jsonMapper, EngineSettings settings,
			IdempotencyObserver observer) {
		this.store = store;
		this.jsonMapper = jsonMapper;
		this.settings = settings;
		this.observer = IsolatedObserver.of(observer);
		this.keys = new IdempotencyKeys(settings.maxKeyLength());
		this.fingerprints = new Fingerprints(jsonMapper);
		this.renewer = new LeaseRenewer(this::renew);
	}

	/**
	 * Checks and resolves a definition once, ahead of its calls.
	 * @param definition the operation's fixed part
	 * @return the prepared operation
	 * @throws IllegalStateException when the result type cannot be written and read back
	 */
	public IdempotentOperation prepare(OperationDefinition definition) {
		return new IdempotentOperation(definition, ResultCodec.forType(this.jsonMapper, definition.resultType()),
				this.settings);
	}

	/**
	 * Runs {@code action} once for {@code key}, or answers as the stored record says.
	 * @param operation the prepared operation
	 * @param key the key value (converted and validated here)
	 * @param payload the payload to fingerprint, when the operation is fingerprinted
	 * @param action the operation's body
	 * @return the result of this run or the stored result of an earlier one
	 * @throws Throwable what {@code action} threw (unchanged), or an
	 * {@link IdempotencyException}
	 */
	public @Nullable Object execute(IdempotentOperation operation, @Nullable Object key, @Nullable Object payload,
			Action action) throws Throwable {
		String workflow = operation.workflow();
		RecordId id;
		try {
			id = new RecordId(workflow, this.keys.toKey(workflow, key));
		}
		catch (IdempotencyException ex) {
			this.observer.onRequest(workflow, Outcome.INVALID_KEY);
			throw ex;
		}
		String fingerprint = operation.fingerprinted() ? this.fingerprints.of(payload) : null;
		ClaimRequest request = new ClaimRequest(id, nextOwner(), fingerprint, operation.leaseTtl(),
				operation.retention());
		boolean conflicted = false;
		long deadline = 0;
		long backoff = FIRST_BACKOFF;
		while (true) {
			ClaimResult claim;
			long start = System.nanoTime();
			try {
				claim = this.store.claim(request);
				this.observer.onStoreCall(StoreOperation.CLAIM, System.nanoTime() - start, true);
			}
			catch (IdempotencyInProgressException ex) {
				// the store cannot wait here (inside the caller's transaction): retry later
				this.observer.onStoreCall(StoreOperation.CLAIM, System.nanoTime() - start, true);
				if (!conflicted) {
					this.observer.onConflict(workflow);
				}
				this.observer.onRequest(workflow, Outcome.CONFLICT);
				throw ex;
			}
			catch (RuntimeException ex) {
				this.observer.onStoreCall(StoreOperation.CLAIM, System.nanoTime() - start, false);
				return storeUnavailable(operation, id, ex, action);
			}
			IdempotencyRecord record = claim.record();
			switch (claim.outcome()) {
				case ACQUIRED -> {
					if (claim.isTakeover()) {
						this.observer.onTakeover(workflow);
						logger.info("Taking over " + id + " (attempt " + record.attempt() + ") after its lease ran out");
					}
					this.observer.onRequest(workflow, Outcome.MISS);
					Execution execution = new Execution(this, operation, id, claim.acquiredHandle(),
							record.attempt(), record.recoveryPoint());
					return run(execution, claim.acquiredHandle(), action);
				}
				case DUPLICATE -> {
					return replay(operation, id, record);
				}
				case FAILED -> {
					this.observer.onRequest(workflow, Outcome.FAILED);
					throw new IdempotentFailureReplayedException(workflow, String.valueOf(record.errorType()),
							record.errorMessage());
				}
				case MISMATCH -> {
					this.observer.onRequest(workflow, Outcome.MISMATCH);
					throw new IdempotencyKeyReusedException("The idempotency key of '" + workflow
							+ "' was used before with a different payload; the operation was not run");
				}
				case IN_PROGRESS -> {
					if (!conflicted) {
						conflicted = true;
						this.observer.onConflict(workflow);
						deadline = System.nanoTime() + this.settings.waitTimeout().toNanos();
					}
					long remaining = deadline - System.nanoTime();
					if (operation.onInProgress() == InProgressPolicy.REJECT || remaining <= 0
							|| !pause(Math.min(backoff, remaining))) {
						this.observer.onRequest(workflow, Outcome.CONFLICT);
						throw new IdempotencyInProgressException("The idempotency key of '" + workflow
								+ "' is being processed by another run (attempt " + record.attempt() + ")");
					}
					backoff = Math.min(backoff * 2, MAX_BACKOFF);
				}
			}
		}
	}

	/**
	 * Rejects a call whose key or payload cannot be taken from its arguments (its
	 * expression fails on them): bad input, like a missing key. It is counted as
	 * {@code invalid_key}; the operation is not run and nothing is stored.
	 * @param operation the prepared operation
	 * @param reason what could not be evaluated, and why
	 * @param cause the evaluation failure
	 * @return the exception to throw
	 */
	public InvalidIdempotencyKeyException rejectKey(IdempotentOperation operation, String reason, Throwable cause) {
		this.observer.onRequest(operation.workflow(), Outcome.INVALID_KEY);
		return new InvalidIdempotencyKeyException("The idempotency key of '" + operation.workflow()
				+ "' cannot be resolved: " + reason + "; the operation was not run", cause);
	}

	/**
	 * The store behind this engine.
	 * @return the store
	 */
	public IdempotencyStore store() {
		return this.store;
	}

	/**
	 * The settings of this engine.
	 * @return the settings
	 */
	public EngineSettings settings() {
		return this.settings;
	}

	@Override
	public void close() {
		this.renewer.close();
	}

	private @Nullable Object run(Execution execution, ClaimHandle claim, Action action) throws Throwable {
		IdempotentOperation operation = execution.operation();
		LeaseRenewer.Lease lease = this.settings.leaseRenewal()
				? this.renewer.register(execution, claim, operation.leaseTtl()) : null;
		IdempotencyContext previous = execution.bind();
		Object result;
		String response;
		try {
			result = action.proceed();
			response = operation.codec().write(result);
		}
		catch (Throwable ex) {
			Execution.unbind(previous);
			cancel(lease);
			finishAfterFailure(execution, claim, ex);
			throw ex;
		}
		Execution.unbind(previous);
		cancel(lease);
		complete(execution, claim, response);
		return result;
	}

	private void complete(Execution execution, ClaimHandle claim, @Nullable String response) {
		boolean completed;
		long start = System.nanoTime();
		try {
			completed = claim.complete(response);
			this.observer.onStoreCall(StoreOperation.COMPLETE, System.nanoTime() - start, true);
		}
		catch (RuntimeException ex) {
			this.observer.onStoreCall(StoreOperation.COMPLETE, System.nanoTime() - start, false);
			throw new IdempotencyStoreException("The result of " + execution.id()
					+ " could not be stored; the operation ran and its record stays in progress until its lease runs out",
					ex);
		}
		if (!completed) {
			throw leaseLost(execution, "its result was not stored");
		}
	}

	private void finishAfterFailure(Execution execution, ClaimHandle claim, Throwable failure) {
		boolean permanent = execution.operation().isPermanentFailure(failure);
		StoreOperation step = permanent ? StoreOperation.FAIL : StoreOperation.RELEASE;
		long start = System.nanoTime();
		try {
			boolean owned = permanent ? claim.fail(failure) : claim.release(failure);
			this.observer.onStoreCall(step, System.nanoTime() - start, true);
			if (!owned) {
				failure.addSuppressed(leaseLost(execution, "its failure was not recorded"));
			}
		}
		catch (RuntimeException ex) {
			this.observer.onStoreCall(step, System.nanoTime() - start, false);
			logger.warn("Could not " + step.tag() + " " + execution.id() + " after it threw " + failure
					+ "; the key stays in progress until its lease runs out", ex);
			failure.addSuppressed(new IdempotencyStoreException("Could not " + step.tag() + " " + execution.id(), ex));
		}
	}

	private @Nullable Object replay(IdempotentOperation operation, RecordId id, IdempotencyRecord record) {
		try {
			Object result = operation.codec().read(record.response());
			this.observer.onRequest(operation.workflow(), Outcome.HIT);
			return result;
		}
		catch (RuntimeException ex) {
			this.observer.onRequest(operation.workflow(), Outcome.STORE_ERROR);
			throw new IdempotencyStoreException(
					"The stored result of " + id + " cannot be read as " + operation.codec().type() + ": " + ex.getMessage(),
					ex);
		}
	}

	private @Nullable Object storeUnavailable(IdempotentOperation operation, RecordId id, RuntimeException ex,
			Action action) throws Throwable {
		this.observer.onRequest(operation.workflow(), Outcome.STORE_ERROR);
		if (this.settings.storeUnavailable() == StoreUnavailablePolicy.FAIL_CLOSED) {
			throw new IdempotencyStoreException("The idempotency store could not claim " + id
					+ "; the operation was not run (idempotency.store-unavailable=fail-closed)", ex);
		}
		logger.warn("The idempotency store could not claim " + id
				+ "; running the operation unprotected (idempotency.store-unavailable=fail-open): " + ex);
		Execution execution = new Execution(this, operation, id, null, 1, null);
		IdempotencyContext previous = execution.bind();
		try {
			return action.proceed();
		}
		finally {
			Execution.unbind(previous);
		}
	}

	void saveRecoveryPoint(Execution execution, ClaimHandle claim, String recoveryPoint) {
		boolean saved;
		long start = System.nanoTime();
		try {
			saved = claim.saveRecoveryPoint(recoveryPoint);
			this.observer.onStoreCall(StoreOperation.RENEW, System.nanoTime() - start, true);
		}
		catch (RuntimeException ex) {
			this.observer.onStoreCall(StoreOperation.RENEW, System.nanoTime() - start, false);
			throw new IdempotencyStoreException("Could not save the recovery point of " + execution.id(), ex);
		}
		if (!saved) {
			throw leaseLost(execution, "its recovery point was not saved");
		}
	}

	private boolean renew(LeaseRenewer.Lease lease) {
		Execution execution = lease.execution;
		long start = System.nanoTime();
		try {
			boolean renewed = lease.claim.renew();
			this.observer.onStoreCall(StoreOperation.RENEW, System.nanoTime() - start, true);
			if (!renewed) {
				logger.warn("The lease of " + execution.id() + " was lost while it ran; its result will not be stored");
			}
			return renewed;
		}
		catch (RuntimeException ex) {
			this.observer.onStoreCall(StoreOperation.RENEW, System.nanoTime() - start, false);
			throw ex;
		}
	}

	private IdempotencyLeaseLostException leaseLost(Execution execution, String consequence) {
		if (execution.markLeaseLost()) {
			this.observer.onLeaseLost(execution.workflow());
		}
		return new IdempotencyLeaseLostException("The claim of " + execution.id() + " (attempt " + execution.attempt()
				+ ") was taken over by another run; " + consequence);
	}

	private void cancel(LeaseRenewer.@Nullable Lease lease) {
		if (lease != null) {
			this.renewer.cancel(lease);
		}
	}

	/**
	 * A fencing token unique to one claim: this engine's random id and a counter (cheaper
	 * than a random UUID per call, and as unique).
	 */
	private String nextOwner() {
		return this.instanceId + "-" + this.claims.incrementAndGet();
	}

	private static boolean pause(long nanos) {
		LockSupport.parkNanos(nanos);
		return !Thread.currentThread().isInterrupted();
	}

	/**
	 * The body of an idempotent operation.
	 */
	@FunctionalInterface
	public interface Action {

		@Nullable Object proceed() throws Throwable;

	}

}
