package io.github.idempotency.internal;

import io.github.idempotency.IdempotencyKeyConverter;
import io.github.idempotency.StoreUnavailablePolicy;
import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.observe.Outcome;
import io.github.idempotency.observe.StoreOperation;
import java.lang.reflect.Type;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotencyContext;
import io.github.idempotency.IdempotencyException;
import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.IdempotencyStoreException;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.InvalidIdempotencyKeyException;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
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

	private static final Log logger = Protocol.logger;

	private final JsonMapper jsonMapper;

	private final EngineSettings settings;

	private final ExecutionObservations observations;

	private final Protocol protocol;

	private final Settlement settlement;

	/**
	 * An engine with no observations and no key converters; see {@link #builder} for the
	 * rest.
	 * @param store the store
	 * @param jsonMapper the mapper results are stored with
	 * @param settings the settings
	 * @param observer receives what the engine does, for metrics
	 */
	public IdempotencyEngine(IdempotencyStore store, JsonMapper jsonMapper, EngineSettings settings,
			IdempotencyObserver observer) {
		this(builder(store, jsonMapper).settings(settings).observer(observer));
	}

	private IdempotencyEngine(Builder builder) {
		IdempotencyStore store = builder.store;
		this.observations = new ExecutionObservations(builder.observations, store.backend(), builder.observeKeys);
		this.jsonMapper = builder.jsonMapper;
		this.settings = builder.settings;
		this.protocol = new Protocol(store, this.jsonMapper, this.settings, IsolatedObserver.of(builder.observer),
				this.observations, builder.keyConverters, (builder.time != null) ? builder.time : EngineTime.system());
		this.settlement = this.protocol.settlement();
	}

	/**
	 * A builder of an engine on {@code store}, whose results are written with
	 * {@code jsonMapper}; everything else has its default (the documented settings, no
	 * meters, no observations, no key converters, the system's time).
	 * @param store the store
	 * @param jsonMapper the mapper results are stored with
	 * @return the builder
	 */
	public static Builder builder(IdempotencyStore store, JsonMapper jsonMapper) {
		return new Builder(store, jsonMapper);
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
		RecordId id = this.protocol.id(operation.workflow(), key);
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
		SingleCall call = new SingleCall(operation, id, payload, action);
		while (true) {
			Object answered = call.claim();
			if (answered != SingleCall.WAIT) {
				return answered;
			}
			long pause = call.pause();
			if (pause < 0 || !this.protocol.time().sleep(pause)) {
				throw call.rejected();
			}
		}
	}

	/**
	 * Runs an asynchronous operation as {@link #execute} does, without holding a thread
	 * while it waits for a run of the same key elsewhere: each claim is made on
	 * {@code claims} (whose threads may block on the store), and a wait is a timer on the
	 * engine's scheduler that hands the next claim to {@code claims}. Nobody who observes
	 * the result can cancel the run: it is the engine's until it is settled.
	 * @param operation the prepared operation, whose result type is asynchronous
	 * @param key the key value (converted and validated here)
	 * @param payload the payload to fingerprint, when the operation is fingerprinted
	 * @param action the operation's body, which returns its asynchronous result
	 * @param claims where claims are made
	 * @return the value of this run's result, or of an earlier one's, once settled; or
	 * what {@link #execute} would throw
	 */
	public CompletableFuture<@Nullable Object> executeAsync(IdempotentOperation operation, @Nullable Object key,
			@Nullable Object payload, Action action, Executor claims) {
		AsyncResult async = operation.async();
		if (async == null) {
			throw new IllegalArgumentException("'" + operation.workflow() + "' does not have an asynchronous result");
		}
		CompletableFuture<@Nullable Object> answer = new CompletableFuture<>();
		Runnable attempt = new Runnable() {

			private @Nullable SingleCall call;

			private @Nullable Observation observation;

			@Override
			public void run() {
				if (this.call == null) {
					try {
						RecordId id = IdempotencyEngine.this.protocol.id(operation.workflow(), key);
						this.call = new SingleCall(operation, id, payload, action);
						if (!IdempotencyEngine.this.observations.isNoop()) {
							this.observation = IdempotencyEngine.this.observations.execution(id);
						}
					}
					catch (Throwable ex) {
						answer.completeExceptionally(ex);
						return;
					}
				}
				Observation observation = this.observation;
				if (observation == null) {
					attempt(this.call);
					return;
				}
				boolean waits;
				try (Observation.Scope scope = observation.openScope()) {
					waits = attempt(this.call);
				}
				if (!waits) {
					ExecutionObservations.stopUnlessHandedOver(observation);
				}
			}

			/** One claim; whether the call waits for another. */
			private boolean attempt(SingleCall call) {
				try {
					Object answered = call.claim();
					if (answered != SingleCall.WAIT) {
						async.stage(Objects.requireNonNull(answered)).whenComplete((value, failure) -> {
							if (failure != null) {
								answer.completeExceptionally((failure instanceof CompletionException
										&& failure.getCause() != null) ? failure.getCause() : failure);
							}
							else {
								answer.complete(value);
							}
						});
						return false;
					}
					long pause = call.pause();
					if (pause < 0) {
						throw call.rejected();
					}
					IdempotencyEngine.this.protocol.time().schedule(() -> execute(claims, this, answer), pause);
					return true;
				}
				catch (Throwable ex) {
					if (this.observation != null) {
						this.observation.error(ex);
					}
					answer.completeExceptionally(ex);
					return false;
				}
			}

		};
		execute(claims, attempt, answer);
		return answer;
	}

	private static void execute(Executor executor, Runnable task, CompletableFuture<?> answer) {
		try {
			executor.execute(task);
		}
		catch (RuntimeException ex) {
			// the executor is shut down, or full
			answer.completeExceptionally(ex);
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
		return new BatchRun(this.protocol, operation, items, failures).run(action);
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
		this.protocol.ended(operation.workflow(), Outcome.INVALID_KEY);
		return new InvalidIdempotencyKeyException("The idempotency key of '" + operation.workflow()
				+ "' cannot be resolved: " + reason + "; the operation was not run", cause);
	}

	/**
	 * The store behind this engine.
	 * @return the store
	 */
	public IdempotencyStore store() {
		return this.protocol.store();
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
		this.protocol.close();
	}

	private @Nullable Object run(Execution execution, Action action) throws Throwable {
		IdempotentOperation operation = execution.operation();
		IdempotencyContext previous = execution.bind();
		Object result;
		try {
			result = action.proceed();
		}
		catch (RedeliveryRequested ex) {
			execution.unbind(previous);
			RuntimeException notGivenBack = this.settlement.settle(execution, new Ending.Abandoned());
			if (notGivenBack != null) {
				logger.warn("Could not give back " + execution.id() + ", whose delivery comes again: "
						+ notGivenBack.getMessage() + "; it runs once its lease runs out");
			}
			return ex.result();
		}
		catch (Throwable ex) {
			execution.unbind(previous);
			RuntimeException notStored = this.settlement.settle(execution, this.settlement.threw(execution, ex));
			if (notStored != null) {
				Settlement.notFinished(ex, notStored);
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
						Settlement.notFinished(failure, notStored);
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

	private @Nullable Object storeUnavailable(IdempotentOperation operation, RecordId id, RuntimeException ex,
			Action action) throws Throwable {
		this.protocol.ended(operation.workflow(), Outcome.STORE_ERROR);
		if (StoreErrors.isRefusal(ex)) {
			throw ex;
		}
		if (this.settings.storeUnavailable() == StoreUnavailablePolicy.FAIL_CLOSED) {
			throw new IdempotencyStoreException("The idempotency store could not claim " + id
					+ "; the operation was not run (idempotency.store-unavailable=fail-closed)", ex);
		}
		logger.warn("The idempotency store could not claim " + id
				+ "; running the operation unprotected (idempotency.store-unavailable=fail-open): " + ex);
		Execution execution = new Execution(this.protocol.calls(), this.protocol.observer(), operation, id, null, null,
				null);
		IdempotencyContext previous = execution.bind();
		try {
			return action.proceed();
		}
		finally {
			execution.unbind(previous);
		}
	}

	/**
	 * One single call's claims: each answered once ({@code Protocol.answer}), the wait for a
	 * run of the same key elsewhere left to the caller, which sleeps ({@link #execute}) or
	 * sets a timer ({@link #executeAsync}).
	 */
	private final class SingleCall {

		/** Claim again once {@link #pause()} has passed. */
		static final Object WAIT = new Object();

		private final IdempotentOperation operation;

		private final RecordId id;

		private final ClaimRequest request;

		private final Action action;

		private @Nullable Backoff waiting;

		private int attempt;

		SingleCall(IdempotentOperation operation, RecordId id, @Nullable Object payload, Action action) {
			String workflow = operation.workflow();
			if (operation.async() != null && Transactions.isActive()) {
				throw new IllegalStateException("The asynchronous idempotent operation '" + workflow + "' is called "
						+ "inside a transaction, which would end before its result is known: call it outside any "
						+ "transaction");
			}
			this.operation = operation;
			this.id = id;
			this.request = IdempotencyEngine.this.protocol.request(operation, id, payload);
			this.action = action;
		}

		/**
		 * One claim and what it answers: this run's result, a stored one, a refusal thrown,
		 * or {@link #WAIT}.
		 */
		@Nullable Object claim() throws Throwable {
			Protocol protocol = IdempotencyEngine.this.protocol;
			String workflow = this.operation.workflow();
			ClaimResult claim;
			try {
				claim = protocol.calls().step(StoreOperation.CLAIM, () -> protocol.store().claim(this.request));
			}
			catch (IdempotencyInProgressException ex) {
				// the store cannot wait here (inside the caller's transaction): retry later
				if (this.waiting == null) {
					protocol.observer().onConflict(workflow);
				}
				protocol.ended(workflow, Outcome.CONFLICT);
				throw ex;
			}
			catch (RuntimeException ex) {
				return storeUnavailable(this.operation, this.id, ex, this.action);
			}
			Protocol.Answer answer = protocol.answer(this.operation, this.request, claim);
			if (!answer.inProgress()) {
				protocol.ended(workflow, answer.outcome());
			}
			if (answer.execution() != null) {
				return run(answer.execution(), this.action);
			}
			if (answer.refusal() != null) {
				throw answer.refusal();
			}
			if (!answer.inProgress()) {
				AsyncResult async = this.operation.async();
				return (async != null) ? async.completed(answer.result()) : answer.result();
			}
			this.attempt = claim.record().attempt();
			if (this.waiting == null) {
				protocol.observer().onConflict(workflow);
				this.waiting = protocol.backoff(IdempotencyEngine.this.settings.waitTimeout());
			}
			return WAIT;
		}

		/** The pause before claiming again, in nanoseconds; -1 when the call is to be rejected. */
		long pause() {
			return (this.operation.onInProgress() == InProgressPolicy.REJECT || this.waiting == null) ? -1
					: this.waiting.next();
		}

		/** The call ends in conflict: the key is still in progress elsewhere. */
		IdempotencyInProgressException rejected() {
			IdempotencyEngine.this.protocol.ended(this.operation.workflow(), Outcome.CONFLICT);
			return new IdempotencyInProgressException("The idempotency key of '" + this.operation.workflow()
					+ "' is being processed by another run (attempt " + this.attempt + ")");
		}

	}

	/**
	 * Builds an {@link IdempotencyEngine}; each setting has its default.
	 */
	public static final class Builder {

		private final IdempotencyStore store;

		private final JsonMapper jsonMapper;

		private EngineSettings settings = EngineSettings.defaults();

		private IdempotencyObserver observer = IdempotencyObserver.NONE;

		private ObservationRegistry observations = ObservationRegistry.NOOP;

		private boolean observeKeys;

		private List<IdempotencyKeyConverter> keyConverters = List.of();

		private @Nullable EngineTime time;

		private Builder(IdempotencyStore store, JsonMapper jsonMapper) {
			this.store = store;
			this.jsonMapper = jsonMapper;
		}

		/**
		 * The settings; {@link EngineSettings#defaults()} unless set.
		 * @param settings the settings
		 * @return this builder
		 */
		public Builder settings(EngineSettings settings) {
			this.settings = settings;
			return this;
		}

		/**
		 * What receives the engine's events, for metrics; none unless set.
		 * @param observer the observer
		 * @return this builder
		 */
		public Builder observer(IdempotencyObserver observer) {
			this.observer = observer;
			return this;
		}

		/**
		 * Makes every call a Micrometer observation ({@code idempotency.execution}, see
		 * docs/observability.md).
		 * @param observations the application's observation registry
		 * @param observeKeys whether the key is a high-cardinality key value of the
		 * observations
		 * @return this builder
		 */
		public Builder observations(ObservationRegistry observations, boolean observeKeys) {
			this.observations = observations;
			this.observeKeys = observeKeys;
			return this;
		}

		/**
		 * The converters of key values of other types (a broker's header), asked in order.
		 * @param keyConverters the converters
		 * @return this builder
		 */
		public Builder keyConverters(List<IdempotencyKeyConverter> keyConverters) {
			this.keyConverters = List.copyOf(keyConverters);
			return this;
		}

		/** The engine's time and scheduler, which it closes with itself. */
		Builder time(EngineTime time) {
			this.time = time;
			return this;
		}

		/**
		 * The engine.
		 * @return a new engine, to close when done
		 */
		public IdempotencyEngine build() {
			return new IdempotencyEngine(this);
		}

	}

	/**
	 * The body of an idempotent operation.
	 */
	@FunctionalInterface
	public interface Action {

		@Nullable Object proceed() throws Throwable;

	}

}
