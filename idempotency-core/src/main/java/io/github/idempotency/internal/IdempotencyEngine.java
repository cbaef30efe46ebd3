package io.github.idempotency.internal;

import io.github.idempotency.BatchFailures;
import io.github.idempotency.IdempotencyKeyConverter;
import io.github.idempotency.IdempotencyRuntime;
import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.observe.Outcome;
import java.lang.reflect.Type;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotencyException;
import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.InvalidIdempotencyKeyException;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.ReactiveIdempotencyStore;
import io.github.idempotency.store.RecordId;

/**
 * Runs the idempotency protocol against an {@link IdempotencyStore}: claim and take the
 * claim's answer (in one place, {@code answer}, for a single call and each item of a batch),
 * run the operation with its lease renewed, and settle how it ended (in one place,
 * {@code Settlement}); wait on or reject a conflict, in one {@code ClaimLoop}. Backend-neutral:
 * the store only answers atomic steps. The annotation aspect, {@code IdempotencyTemplate} and
 * the web adapter all come here.
 */
public final class IdempotencyEngine implements IdempotencyRuntime, AutoCloseable {

	private final JsonMapper jsonMapper;

	private final EngineSettings settings;

	private final ExecutionObservations observations;

	private final Protocol protocol;

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
		this.protocol = new Protocol(store,
				(builder.reactiveStore != null) ? new NonBlockingStore((ReactiveIdempotencyStore) builder.reactiveStore)
						: null,
				this.jsonMapper, this.settings, IsolatedObserver.of(builder.observer),
				this.observations, builder.keyConverters, (builder.time != null) ? builder.time : EngineTime.system());
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
	 * The engine {@code runtime} is.
	 * @param runtime an engine, as its bean is declared
	 * @return the engine
	 * @throws IllegalArgumentException when {@code runtime} is not one
	 */
	public static IdempotencyEngine of(IdempotencyRuntime runtime) {
		if (runtime instanceof IdempotencyEngine engine) {
			return engine;
		}
		throw new IllegalArgumentException("Not the idempotency engine: " + runtime.getClass().getName()
				+ "; only the starter builds an IdempotencyRuntime");
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
		AsyncResult async = operation.async();
		if (async != null && async.isLazy() && this.protocol.nonBlocking() != null && !Transactions.isActive()) {
			// claimed when its result is subscribed, with the subscriber's context
			return async.deferred((context) -> executeAsync(operation, key, payload, action, Runnable::run, context));
		}
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
		return executeAsync(operation, key, payload, action, claims, null);
	}

	/**
	 * Runs an asynchronous operation as {@link #executeAsync(IdempotentOperation, Object,
	 * Object, Action, Executor)} does; with a non-blocking store
	 * ({@link Builder#reactiveStore}), each claim is made without {@code claims}, subscribed
	 * with {@code context}, and the run settled without a thread held.
	 * @param operation the prepared operation, whose result type is asynchronous
	 * @param key the key value (converted and validated here)
	 * @param payload the payload to fingerprint, when the operation is fingerprinted
	 * @param action the operation's body, which returns its asynchronous result
	 * @param claims where claims are made on a blocking store
	 * @param context the caller's Reactor {@code ContextView} (a reactive transaction), or
	 * {@code null}
	 * @return as the other method says
	 */
	public CompletableFuture<@Nullable Object> executeAsync(IdempotentOperation operation, @Nullable Object key,
			@Nullable Object payload, Action action, Executor claims, @Nullable Object context) {
		AsyncResult async = operation.async();
		if (async == null) {
			throw new IllegalArgumentException("'" + operation.workflow() + "' does not have an asynchronous result");
		}
		return new AsyncSingleCall(this.protocol, operation, key, payload, action, claims, context).start();
	}

	/**
	 * Whether this engine's store has a non-blocking side ({@link Builder#reactiveStore}):
	 * asynchronous calls then hold no thread while the store answers.
	 * @return {@code true} with a non-blocking store
	 */
	public boolean isNonBlocking() {
		return this.protocol.nonBlocking() != null;
	}

	private @Nullable Object execute(IdempotentOperation operation, RecordId id, @Nullable Object payload,
			Action action) throws Throwable {
		return new SingleCall(this.protocol, operation, id, payload, action).execute();
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

		/** A {@code ReactiveIdempotencyStore}, typed so that the engine loads without Reactor. */
		private @Nullable Object reactiveStore;

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

		/**
		 * The same store's non-blocking side (the same records, as the store's
		 * {@link ReactiveIdempotencyStore#blocking blocking} view is of it), which an
		 * asynchronous call ({@code Mono}, {@code CompletableFuture}, a WebFlux handler method)
		 * uses instead of a thread that waits on the store: claimed when its result is
		 * subscribed, with the subscriber's Reactor context, and settled without a thread held.
		 * None unless set.
		 * @param reactiveStore the non-blocking store
		 * @return this builder
		 */
		public Builder reactiveStore(ReactiveIdempotencyStore reactiveStore) {
			this.reactiveStore = reactiveStore;
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
