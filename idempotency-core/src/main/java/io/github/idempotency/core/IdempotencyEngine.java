package io.github.idempotency.core;

import java.lang.reflect.Type;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicLong;

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
 * Runs the idempotency protocol against an {@link IdempotencyStore}: claim and take the
 * claim's answer (in one place, {@code answer}, for a single call and each item of a batch),
 * run the operation with its lease renewed, and settle how it ended (in one place,
 * {@code Settlement}); wait on or reject a conflict with one {@code Backoff}. Backend-neutral:
 * the store only answers atomic steps. The annotation aspect, {@code IdempotencyTemplate} and
 * the web adapter all come here.
 */
public final class IdempotencyEngine implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(IdempotencyEngine.class);

	private final IdempotencyStore store;

	private final JsonMapper jsonMapper;

	private final EngineSettings settings;

	private final IdempotencyObserver observer;

	private final ExecutionObservations observations;

	private final IdempotencyKeys keys;

	private final Fingerprints fingerprints;

	private final LeaseRenewer renewer;

	private final StoreCalls calls;

	private final Settlement settlement;

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
		this.calls = new StoreCalls(this.observer, this.observations);
		this.settlement = new Settlement(store, this.observer, this.calls, this.renewer);
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
		Backoff waiting = null;
		while (true) {
			ClaimResult claim;
			try {
				claim = this.calls.step(StoreOperation.CLAIM, () -> this.store.claim(request));
			}
			catch (IdempotencyInProgressException ex) {
				// the store cannot wait here (inside the caller's transaction): retry later
				if (waiting == null) {
					this.observer.onConflict(workflow);
				}
				ended(workflow, Outcome.CONFLICT);
				throw ex;
			}
			catch (RuntimeException ex) {
				return storeUnavailable(operation, id, ex, action);
			}
			Answer answer = answer(operation, request, claim);
			if (!answer.inProgress()) {
				ended(workflow, answer.outcome());
			}
			if (answer.execution() != null) {
				return run(answer.execution(), action);
			}
			if (answer.refusal() != null) {
				throw answer.refusal();
			}
			if (!answer.inProgress()) {
				return (operation.async() != null) ? operation.async().completed(answer.result()) : answer.result();
			}
			if (waiting == null) {
				this.observer.onConflict(workflow);
				waiting = Backoff.within(this.settings.waitTimeout());
			}
			if (operation.onInProgress() == InProgressPolicy.REJECT || !waiting.await()) {
				ended(workflow, Outcome.CONFLICT);
				throw new IdempotencyInProgressException("The idempotency key of '" + workflow
						+ "' is being processed by another run (attempt " + claim.record().attempt() + ")");
			}
		}
	}

	/**
	 * The one place a claim's answer is taken, for a single call and for each item of a
	 * batch alike: an acquired claim becomes a run (its lease renewed from now on), a
	 * duplicate its stored result, a failed or reused key a refusal; a key in progress
	 * elsewhere is left to the caller to wait for. The answer names the call's outcome, for
	 * the caller to count once it is final ({@link #ended}).
	 * @throws IdempotencyStoreException when a duplicate's stored result cannot be read
	 * (counted)
	 */
	Answer answer(IdempotentOperation operation, ClaimRequest request, ClaimResult claim) {
		String workflow = operation.workflow();
		IdempotencyRecord record = claim.record();
		RecordId id = request.id();
		return switch (claim.outcome()) {
			case ACQUIRED -> {
				if (claim.isTakeover()) {
					this.observer.onTakeover(workflow);
					logger.info("Taking over " + id + " (attempt " + record.attempt() + ") after its lease ran out");
				}
				ClaimHandle handle = claim.acquiredHandle();
				Execution execution = new Execution(this, operation, id, handle, request.owner(), record);
				if (this.settings.leaseRenewal()) {
					execution.lease(this.renewer.register(execution, handle,
							this.settings.leaseRenewalInterval(operation.leaseTtl())));
				}
				yield Answer.run(execution);
			}
			case DUPLICATE -> {
				Object result;
				try {
					result = operation.codec().read(record.response());
				}
				catch (RuntimeException ex) {
					ended(workflow, Outcome.STORE_ERROR);
					throw new IdempotencyStoreException("The stored result of " + id + " cannot be read as "
							+ operation.codec().type() + ": " + ex.getMessage(), ex);
				}
				yield Answer.replay(result);
			}
			case FAILED -> {
				yield Answer.refuse(Outcome.FAILED, new IdempotentFailureReplayedException(workflow,
						String.valueOf(record.errorType()), record.errorMessage()));
			}
			case MISMATCH -> {
				yield Answer.refuse(Outcome.MISMATCH, new IdempotencyKeyReusedException("The idempotency key of '" + workflow
						+ "' was used before with a different payload; the operation was not run"));
			}
			case IN_PROGRESS -> Answer.IN_PROGRESS;
		};
	}

	/**
	 * What a claim's answer asks of its call: run ({@code execution}), answer with a stored
	 * {@code result}, throw a {@code refusal}, or wait for the run in progress elsewhere.
	 */
	record Answer(@Nullable Outcome outcome, @Nullable Execution execution, @Nullable Object result,
			@Nullable IdempotencyException refusal) {

		static final Answer IN_PROGRESS = new Answer(null, null, null, null);

		static Answer run(Execution execution) {
			return new Answer(Outcome.MISS, execution, null, null);
		}

		static Answer replay(@Nullable Object result) {
			return new Answer(Outcome.HIT, null, result, null);
		}

		static Answer refuse(Outcome outcome, IdempotencyException refusal) {
			return new Answer(outcome, null, null, refusal);
		}

		boolean inProgress() {
			return this.outcome == null;
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
		this.settlement.close();
	}

	private @Nullable Object run(Execution execution, Action action) throws Throwable {
		IdempotentOperation operation = execution.operation();
		IdempotencyContext previous = execution.bind();
		Object result;
		try {
			result = action.proceed();
		}
		catch (Throwable ex) {
			execution.unbind(previous);
			RuntimeException notStored = this.settlement.settle(execution, this.settlement.threw(execution, ex));
			if (notStored != null) {
				notFinished(ex, notStored);
			}
			throw ex;
		}
		execution.unbind(previous);
		if (operation.async() != null) {
			return settleLater(execution, operation.async(), result);
		}
		RuntimeException notStored = this.settlement.settle(execution, this.settlement.returned(execution, result));
		if (notStored != null) {
			throw notStored;
		}
		return result;
	}

	/**
	 * Settles the run once an asynchronous result settles (the lease renewed until then),
	 * and answers with a result that settles after the record did. Any number of
	 * subscribers, early or late, re-subscribing or cancelling, see that one outcome: none
	 * of them reaches the settlement.
	 */
	private Object settleLater(Execution execution, AsyncResult async, @Nullable Object result) {
		if (result == null) {
			this.settlement.settle(execution, new Ending.Released(new IllegalStateException("null result")));
			throw new IllegalStateException("The asynchronous idempotent operation '" + execution.workflow()
					+ "' returned null instead of a result that settles");
		}
		CompletableFuture<@Nullable Object> settled = new CompletableFuture<>();
		Observation observation = this.observations.handOver();
		async.stage(result).whenComplete((value, thrown) -> {
			Throwable failure = (thrown instanceof CompletionException && thrown.getCause() != null) ? thrown.getCause()
					: thrown;
			Ending ending = (failure != null) ? this.settlement.threw(execution, failure)
					: this.settlement.returned(execution, value);
			this.settlement.settleLater(execution, ending, observation, (notStored) -> {
				if (failure == null && notStored != null) {
					settle(settled, observation, null, notStored);
				}
				else {
					if (failure != null && notStored != null) {
						notFinished(failure, notStored);
					}
					settle(settled, observation, value, failure);
				}
			});
		});
		return async.of(settled);
	}

	private static void settle(CompletableFuture<@Nullable Object> settled, @Nullable Observation observation,
			@Nullable Object value, @Nullable Throwable failure) {
		try {
			if (observation != null) {
				if (failure != null) {
					observation.error(failure);
				}
				observation.stop();
			}
		}
		finally {
			if (failure != null) {
				settled.completeExceptionally(failure);
			}
			else {
				settled.complete(value);
			}
		}
	}

	/**
	 * The store did not take how a run that threw {@code failure} ended: the store error
	 * (or lost lease) is added to {@code failure} as suppressed.
	 */
	static void notFinished(Throwable failure, RuntimeException notStored) {
		if (notStored instanceof IdempotencyStoreException) {
			logger.warn("After the operation threw " + failure + ": " + notStored.getMessage(), notStored);
		}
		failure.addSuppressed(notStored);
	}

	/**
	 * A call ended: the meters and the call's observation learn how.
	 */
	void ended(String workflow, Outcome outcome) {
		this.observer.onRequest(workflow, outcome);
		this.observations.outcome(outcome);
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
		try {
			saved = this.calls.timed(StoreOperation.RENEW, () -> claim.saveRecoveryPoint(recoveryPoint));
		}
		catch (RuntimeException ex) {
			throw new IdempotencyStoreException("Could not save the recovery point of " + execution.id()
					+ "; the operation stops before its next step", ex);
		}
		if (!saved) {
			throw execution.leaseLost(this.observer, "its recovery point was not saved");
		}
	}

	private boolean renew(LeaseRenewer.Lease lease) {
		boolean renewed = this.calls.timed(StoreOperation.RENEW, lease.claim::renew);
		if (!renewed) {
			logger.warn("The lease of " + lease.execution.id() + " was lost while it ran; its result will not be stored");
		}
		return renewed;
	}

	/**
	 * A fencing token unique to one claim: this engine's random id and a counter (cheaper
	 * than a random UUID per call, and as unique).
	 */
	String nextOwner() {
		return this.instanceId + "-" + this.claims.incrementAndGet();
	}

	IdempotencyObserver observer() {
		return this.observer;
	}

	StoreCalls calls() {
		return this.calls;
	}

	Settlement settlement() {
		return this.settlement;
	}

	IdempotencyKeys keys() {
		return this.keys;
	}

	Fingerprints fingerprints() {
		return this.fingerprints;
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
