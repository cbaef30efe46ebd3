package io.github.idempotency.core;

import java.lang.reflect.Type;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotencyContext;
import io.github.idempotency.IdempotencyException;
import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.IdempotencyKeyReusedException;
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
 * operation and complete, fail or release it (how, and the retries when the store fails to
 * take it, in {@code RunEndings}); renew the lease while it runs; wait on or reject a
 * conflict; replay duplicates and permanent failures. Backend-neutral: the store
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

	private final ExecutionObservations observations;

	private final IdempotencyKeys keys;

	private final Fingerprints fingerprints;

	private final LeaseRenewer renewer;

	private final RunEndings endings;

	private final String instanceId = UUID.randomUUID().toString();

	private final AtomicLong claims = new AtomicLong();

	public IdempotencyEngine(IdempotencyStore store, JsonMapper jsonMapper, EngineSettings settings,
			IdempotencyObserver observer) {
		this(store, jsonMapper, settings, observer, ObservationRegistry.NOOP, false);
	}

	/**
	 * An engine whose calls are also Micrometer observations (see
	 * {@code idempotency.execution} in README).
	 * @param store the store
	 * @param jsonMapper the mapper results are stored with
	 * @param settings the settings
	 * @param observer receives what the engine does, for metrics
	 * @param observations the application's observation registry
	 * @param observeKeys whether the key is a high-cardinality key value of the observations
	 */
	public IdempotencyEngine(IdempotencyStore store, JsonMapper jsonMapper, EngineSettings settings,
			IdempotencyObserver observer, ObservationRegistry observations, boolean observeKeys) {
		this(store, jsonMapper, settings, observer, observations, observeKeys, List.of());
	}

	/**
	 * An engine whose calls are also Micrometer observations and that turns key values of
	 * other types (a broker's header) into keys with {@code keyConverters}.
	 * @param store the store
	 * @param jsonMapper the mapper results are stored with
	 * @param settings the settings
	 * @param observer receives what the engine does, for metrics
	 * @param observations the application's observation registry
	 * @param observeKeys whether the key is a high-cardinality key value of the observations
	 * @param keyConverters the converters of key values, asked in order
	 */
	public IdempotencyEngine(IdempotencyStore store, JsonMapper jsonMapper, EngineSettings settings,
			IdempotencyObserver observer, ObservationRegistry observations, boolean observeKeys,
			List<IdempotencyKeyConverter> keyConverters) {
		this.observations = new ExecutionObservations(observations, store.backend(), observeKeys);
		this.store = store;
		this.jsonMapper = jsonMapper;
		this.settings = settings;
		this.observer = IsolatedObserver.of(observer);
		this.keys = new IdempotencyKeys(settings.maxKeyLength(), keyConverters);
		this.fingerprints = new Fingerprints(jsonMapper);
		this.renewer = new LeaseRenewer(this::renew);
		this.endings = new RunEndings(store, this.observer, this.observations);
	}

	/**
	 * Checks and resolves a definition once, ahead of its calls.
	 * @param definition the operation's fixed part
	 * @return the prepared operation
	 * @throws IllegalStateException when the result type cannot be written and read back
	 */
	public IdempotentOperation prepare(OperationDefinition definition) {
		AsyncResult async = AsyncResult.of(definition.resultType());
		Type valueType = (async != null) ? async.valueType() : definition.resultType();
		return new IdempotentOperation(definition, ResultCodec.forType(this.jsonMapper, valueType), async,
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
			ended(workflow, Outcome.INVALID_KEY);
			throw ex;
		}
		if (this.observations.isNoop()) {
			return execute(operation, id, payload, action);
		}
		Observation observation = this.observations.execution(id);
		try (Observation.Scope scope = observation.openScope()) {
			return execute(operation, id, payload, action);
		}
		catch (Throwable ex) {
			observation.error(ex);
			throw ex;
		}
		finally {
			ExecutionObservations.stopUnlessHandedOver(observation);
		}
	}

	private @Nullable Object execute(IdempotentOperation operation, RecordId id, @Nullable Object payload,
			Action action) throws Throwable {
		String workflow = operation.workflow();
		if (operation.async() != null && Transactions.isActive()) {
			throw new IllegalStateException("The asynchronous idempotent operation '" + workflow + "' is called inside "
					+ "a transaction, which would end before its result is known: call it outside any transaction");
		}
		String fingerprint = operation.fingerprinted() ? this.fingerprints.of(payload) : null;
		ClaimRequest request = new ClaimRequest(id, nextOwner(), fingerprint, operation.leaseTtl(),
				operation.retention());
		boolean conflicted = false;
		long deadline = 0;
		long backoff = FIRST_BACKOFF;
		while (true) {
			ClaimResult claim;
			Observation step = this.observations.step(StoreOperation.CLAIM);
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
				ended(workflow, Outcome.CONFLICT);
				throw ex;
			}
			catch (RuntimeException ex) {
				this.observer.onStoreCall(StoreOperation.CLAIM, System.nanoTime() - start, false);
				step.error(ex);
				return storeUnavailable(operation, id, ex, action);
			}
			finally {
				step.stop();
			}
			IdempotencyRecord record = claim.record();
			switch (claim.outcome()) {
				case ACQUIRED -> {
					if (claim.isTakeover()) {
						this.observer.onTakeover(workflow);
						logger.info("Taking over " + id + " (attempt " + record.attempt() + ") after its lease ran out");
					}
					ended(workflow, Outcome.MISS);
					Execution execution = new Execution(this, operation, id, claim.acquiredHandle(), request.owner(),
							record);
					return run(execution, claim.acquiredHandle(), action);
				}
				case DUPLICATE -> {
					return replay(operation, id, record);
				}
				case FAILED -> {
					ended(workflow, Outcome.FAILED);
					throw new IdempotentFailureReplayedException(workflow, String.valueOf(record.errorType()),
							record.errorMessage());
				}
				case MISMATCH -> {
					ended(workflow, Outcome.MISMATCH);
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
						ended(workflow, Outcome.CONFLICT);
						throw new IdempotencyInProgressException("The idempotency key of '" + workflow
								+ "' is being processed by another run (attempt " + record.attempt() + ")");
					}
					backoff = Math.min(backoff * 2, MAX_BACKOFF);
				}
			}
		}
	}

	/**
	 * Runs a batch: each item is its own operation (its own record, metrics and outcome),
	 * claimed together ({@link IdempotencyStore#claimAll}); {@code action} is called once
	 * with only the items that must run, in their order. New items run; duplicates are
	 * answered with their stored results and not run; items that failed permanently before
	 * are skipped (outcome {@code failed}); an item whose key runs elsewhere is waited for
	 * (only that item is polled) or rejected as {@code onInProgress} says, rejecting the
	 * whole batch ({@link IdempotencyInProgressException}, what the batch acquired released);
	 * a key named twice runs once. An item whose key is invalid or was used with another
	 * payload fails the batch at that item when {@code failures} has a way to say so
	 * ({@link BatchFailures#failAt}): the items before it run, the rest are released. Else
	 * it is skipped with a WARN.
	 * <p>
	 * When {@code action} throws a failure of one item ({@link BatchFailures#failedIndex}),
	 * the items before it are completed, that item is failed or released by its cause, the
	 * rest are released, and the failure is rethrown as it concerns the item's position in
	 * the whole batch ({@link BatchFailures#translate}). Any other exception releases every
	 * item that ran and is rethrown unchanged.
	 * @param operation the prepared operation (a synchronous result type)
	 * @param items the batch, in order
	 * @param failures how the caller's framework reports the failure of one item
	 * @param action runs the given items
	 * @return one result per item, in order: the result of this run, the stored result of a
	 * duplicate (a key named twice: the result of its first item), or {@code null} for an
	 * item not run
	 * @throws Throwable what {@code action} threw (translated or unchanged), or an
	 * {@link IdempotencyException}
	 */
	public List<@Nullable Object> executeAll(IdempotentOperation operation, List<BatchItem> items,
			BatchFailures failures, BatchAction action) throws Throwable {
		if (operation.async() != null) {
			throw new IllegalArgumentException("A batch of '" + operation.workflow()
					+ "' cannot have an asynchronous result type");
		}
		return new BatchRun(this, operation, items, failures).run(action);
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
		ended(operation.workflow(), Outcome.INVALID_KEY);
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
		this.endings.close();
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
			if (operation.async() != null) {
				execution.unbind(previous);
				return settleLater(execution, claim, lease, operation.async(), result);
			}
			response = operation.codec().write(result);
		}
		catch (Throwable ex) {
			execution.unbind(previous);
			cancel(lease);
			this.endings.finishAfterFailure(execution, claim, ex);
			throw ex;
		}
		execution.unbind(previous);
		cancel(lease);
		this.endings.complete(execution, claim, response, true);
		return result;
	}

	/**
	 * Completes, fails or releases the claim once an asynchronous result settles (the lease
	 * renewed until then), and answers with a result that settles after the record did.
	 */
	private Object settleLater(Execution execution, ClaimHandle claim, LeaseRenewer.@Nullable Lease lease,
			AsyncResult async, @Nullable Object result) {
		if (result == null) {
			throw new IllegalStateException("The asynchronous idempotent operation '" + execution.workflow()
					+ "' returned null instead of a result that settles");
		}
		CompletableFuture<@Nullable Object> settled = new CompletableFuture<>();
		async.stage(result)
			.whenComplete(new AsyncSettlement(this, execution, claim, lease, settled, this.observations.handOver()));
		return async.of(settled);
	}

	/**
	 * A call ended: the meters and the call's observation learn how.
	 */
	void ended(String workflow, Outcome outcome) {
		this.observer.onRequest(workflow, outcome);
		this.observations.outcome(outcome);
	}

	private @Nullable Object replay(IdempotentOperation operation, RecordId id, IdempotencyRecord record) {
		try {
			Object result = operation.codec().read(record.response());
			ended(operation.workflow(), Outcome.HIT);
			return (operation.async() != null) ? operation.async().completed(result) : result;
		}
		catch (RuntimeException ex) {
			ended(operation.workflow(), Outcome.STORE_ERROR);
			throw new IdempotencyStoreException(
					"The stored result of " + id + " cannot be read as " + operation.codec().type() + ": " + ex.getMessage(),
					ex);
		}
	}

	private @Nullable Object storeUnavailable(IdempotentOperation operation, RecordId id, RuntimeException ex,
			Action action) throws Throwable {
		ended(operation.workflow(), Outcome.STORE_ERROR);
		if (isRefusal(ex)) {
			throw ex;
		}
		if (this.settings.storeUnavailable() == StoreUnavailablePolicy.FAIL_CLOSED) {
			throw new IdempotencyStoreException("The idempotency store could not claim " + id
					+ "; the operation was not run (idempotency.store-unavailable=fail-closed)", ex);
		}
		logger.warn("The idempotency store could not claim " + id
				+ "; running the operation unprotected (idempotency.store-unavailable=fail-open): " + ex);
		Execution execution = new Execution(this, operation, id, null, null, null);
		IdempotencyContext previous = execution.bind();
		try {
			return action.proceed();
		}
		finally {
			execution.unbind(previous);
		}
	}

	/**
	 * Whether a failed claim is the store refusing this call (a misuse such as a claim
	 * inside a read-only transaction) rather than the store being unreachable: never a
	 * reason to run unprotected, and not worth a retry wrapped as a store error.
	 */
	static boolean isRefusal(RuntimeException ex) {
		return ex instanceof IllegalStateException || ex instanceof IllegalArgumentException;
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
			throw execution.leaseLost(this.observer, "its recovery point was not saved");
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

	void cancel(LeaseRenewer.@Nullable Lease lease) {
		if (lease != null) {
			this.renewer.cancel(lease);
		}
	}

	/**
	 * A fencing token unique to one claim: this engine's random id and a counter (cheaper
	 * than a random UUID per call, and as unique).
	 */
	String nextOwner() {
		return this.instanceId + "-" + this.claims.incrementAndGet();
	}

	private static boolean pause(long nanos) {
		LockSupport.parkNanos(nanos);
		return !Thread.currentThread().isInterrupted();
	}

	IdempotencyObserver observer() {
		return this.observer;
	}

	RunEndings endings() {
		return this.endings;
	}

	IdempotencyKeys keys() {
		return this.keys;
	}

	Fingerprints fingerprints() {
		return this.fingerprints;
	}

	LeaseRenewer.@Nullable Lease register(Execution execution, ClaimHandle claim) {
		return this.settings.leaseRenewal()
				? this.renewer.register(execution, claim, execution.operation().leaseTtl()) : null;
	}

	/**
	 * Waits before polling a conflict again.
	 * @return {@code false} when the thread was interrupted
	 */
	static boolean pauseFor(long nanos) {
		return pause(nanos);
	}

	static long firstBackoff() {
		return FIRST_BACKOFF;
	}

	static long maxBackoff() {
		return MAX_BACKOFF;
	}

	/**
	 * The body of a batch: runs the items at the given positions of the batch.
	 */
	@FunctionalInterface
	public interface BatchAction {

		/**
		 * Runs the items at {@code positions} (ascending indexes into the batch), storing the
		 * result of the {@code j}-th of them, as soon as it has one, in {@code results[j]}
		 * (left {@code null} for {@code void}).
		 * @param positions the items to run
		 * @param results where the results go
		 * @throws Throwable what the items threw
		 */
		void proceed(int[] positions, @Nullable Object[] results) throws Throwable;

	}

	/**
	 * The body of an idempotent operation.
	 */
	@FunctionalInterface
	public interface Action {

		@Nullable Object proceed() throws Throwable;

	}

}
