package io.github.idempotency.internal;

import io.github.idempotency.IdempotencyKeyConverter;
import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.observe.Outcome;
import io.github.idempotency.observe.StoreOperation;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotencyException;
import io.github.idempotency.IdempotencyKeyReusedException;
import io.github.idempotency.IdempotencyStoreException;
import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;

/**
 * What every shape of call shares: the store and how a call to it is timed
 * ({@link StoreCalls}), keys and fingerprints, owners, the one answer to a claim
 * ({@link #answer}), the lease renewal of the runs, the one settlement of their endings
 * ({@link Settlement}) and the outcome of a call. The shapes ({@link SingleCall},
 * {@link BatchRun}, whose claims go round the one {@link ClaimLoop}) drive it; it calls
 * none of them.
 */
final class Protocol implements AutoCloseable {

	/** The engine's logger: what the protocol does is the engine's to say. */
	static final Log logger = LogFactory.getLog("io.github.idempotency.internal.IdempotencyEngine");

	private final IdempotencyStore store;

	/** The store's non-blocking side, when it has one ({@code ReactiveIdempotencyStore}). */
	private final @Nullable NonBlockingStore nonBlocking;

	private final EngineSettings settings;

	private final IdempotencyObserver observer;

	private final ExecutionObservations observations;

	private final StoreCalls calls;

	private final IdempotencyKeys keys;

	private final Fingerprints fingerprints;

	private final LeaseRenewer renewer;

	private final Settlement settlement;

	private final EngineTime time;

	private final String instanceId = UUID.randomUUID().toString();

	private final AtomicLong claims = new AtomicLong();

	Protocol(IdempotencyStore store, @Nullable NonBlockingStore nonBlocking, JsonMapper jsonMapper,
			EngineSettings settings, IdempotencyObserver observer, ExecutionObservations observations,
			List<IdempotencyKeyConverter> keyConverters, EngineTime time) {
		this.store = store;
		this.nonBlocking = nonBlocking;
		this.settings = settings;
		this.observer = observer;
		this.observations = observations;
		this.time = time;
		this.calls = new StoreCalls(observer, observations, time);
		this.keys = new IdempotencyKeys(settings.maxKeyLength(), keyConverters);
		this.fingerprints = new Fingerprints(jsonMapper);
		this.renewer = new LeaseRenewer(this::renew, time);
		this.settlement = new Settlement(store, observer, this.calls, this.renewer);
	}

	/**
	 * Stops renewing leases and closes the engine's time: retries already scheduled still
	 * run and settle their results; no new one is taken.
	 */
	@Override
	public void close() {
		this.renewer.close();
		this.time.close();
	}

	/**
	 * The record a key value names, or why it names none (counted as {@code invalid_key}).
	 */
	RecordId id(String workflow, @Nullable Object key) {
		try {
			return new RecordId(workflow, this.keys.toKey(workflow, key));
		}
		catch (IdempotencyException ex) {
			ended(workflow, Outcome.INVALID_KEY);
			throw ex;
		}
	}

	/**
	 * What a call claims: its record, a fresh owner, its payload's fingerprint.
	 */
	ClaimRequest request(IdempotentOperation operation, RecordId id, @Nullable Object payload) {
		return new ClaimRequest(id, nextOwner(), operation.fingerprinted() ? this.fingerprints.of(payload) : null,
				operation.leaseTtl(), operation.retention());
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
				Execution execution = new Execution(this.calls, this.observer, operation, id, handle, request.owner(),
						record);
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
	 * The same claim again, under a new owner.
	 */
	ClaimRequest again(ClaimRequest request) {
		return new ClaimRequest(request.id(), nextOwner(), request.fingerprint(), request.leaseTtl(),
				request.retention());
	}

	/**
	 * A call ended: the meters and the call's observation learn how.
	 */
	void ended(String workflow, Outcome outcome) {
		this.observer.onRequest(workflow, outcome);
		this.observations.outcome(outcome);
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
	private String nextOwner() {
		return this.instanceId + "-" + this.claims.incrementAndGet();
	}

	IdempotencyStore store() {
		return this.store;
	}

	@Nullable NonBlockingStore nonBlocking() {
		return this.nonBlocking;
	}

	EngineTime time() {
		return this.time;
	}

	EngineSettings settings() {
		return this.settings;
	}

	IdempotencyObserver observer() {
		return this.observer;
	}

	ExecutionObservations observations() {
		return this.observations;
	}

	StoreCalls calls() {
		return this.calls;
	}

	Settlement settlement() {
		return this.settlement;
	}

}
