package io.github.idempotency.store.memory;

import java.time.Clock;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.UnaryOperator;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.ClaimRules;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;

/**
 * A store in this JVM's memory: for tests and demos. Records are lost with the process
 * and are not shared between instances. Each operation is one atomic
 * {@link ConcurrentHashMap} step; expired records are dropped as they are met and by
 * {@link #purgeExpired()}.
 */
public final class MemoryIdempotencyStore implements IdempotencyStore {

	private final ConcurrentMap<RecordId, IdempotencyRecord> records = new ConcurrentHashMap<>();

	private final Clock clock;

	public MemoryIdempotencyStore() {
		this(Clock.systemUTC());
	}

	public MemoryIdempotencyStore(Clock clock) {
		this.clock = clock;
	}

	@Override
	public ClaimResult claim(ClaimRequest request) {
		Instant now = this.clock.instant();
		ClaimResult[] result = new ClaimResult[1];
		this.records.compute(request.id(), (id, existing) -> {
			ClaimOutcome outcome = ClaimRules.decide(existing, request.fingerprint(), now);
			if (outcome != ClaimOutcome.ACQUIRED) {
				result[0] = ClaimResult.of(outcome, existing);
				return existing;
			}
			IdempotencyRecord claimed = ClaimRules.claimed(existing, request, now);
			result[0] = ClaimResult.acquired(claimed, new MemoryClaim(request));
			return claimed;
		});
		return result[0];
	}

	@Override
	public Optional<IdempotencyRecord> find(RecordId id) {
		IdempotencyRecord record = this.records.get(id);
		return (record == null || record.isExpired(this.clock.instant())) ? Optional.empty() : Optional.of(record);
	}

	@Override
	public boolean delete(RecordId id) {
		return this.records.remove(id) != null;
	}

	@Override
	public String backend() {
		return "memory";
	}

	/**
	 * Drops every expired record.
	 * @return how many were dropped
	 */
	public int purgeExpired() {
		Instant now = this.clock.instant();
		int before = this.records.size();
		this.records.values().removeIf((record) -> record.isExpired(now));
		return before - this.records.size();
	}

	/**
	 * A claim held by its lease: each step is one atomic map operation on the record, if it
	 * is still this claim's.
	 */
	private final class MemoryClaim implements ClaimHandle {

		private final ClaimRequest request;

		MemoryClaim(ClaimRequest request) {
			this.request = request;
		}

		@Override
		public boolean complete(@Nullable String response) {
			return finish(RecordStatus.COMPLETED, response, null, null);
		}

		@Override
		public boolean fail(Throwable failure) {
			return finish(RecordStatus.FAILED, null, IdempotencyRecord.errorTypeOf(failure),
					IdempotencyRecord.errorMessageOf(failure));
		}

		@Override
		public boolean release(Throwable failure) {
			boolean[] released = new boolean[1];
			MemoryIdempotencyStore.this.records.computeIfPresent(this.request.id(), (key, record) -> {
				released[0] = isOwned(record);
				return released[0] ? null : record;
			});
			return released[0];
		}

		@Override
		public boolean renew() {
			return update((record) -> withLease(record, null));
		}

		@Override
		public boolean saveRecoveryPoint(String recoveryPoint) {
			return update((record) -> withLease(record, recoveryPoint));
		}

		private boolean finish(RecordStatus status, @Nullable String response, @Nullable String errorType,
				@Nullable String errorMessage) {
			return update((record) -> {
				Instant now = MemoryIdempotencyStore.this.clock.instant();
				return new IdempotencyRecord(this.request.id(), status, record.fingerprint(), this.request.owner(), record.attempt(),
						record.leaseUntil(), record.recoveryPoint(), response, errorType, errorMessage,
						record.createdAt(), now, now.plus(this.request.retention()));
			});
		}

		private IdempotencyRecord withLease(IdempotencyRecord record, @Nullable String recoveryPoint) {
			Instant now = MemoryIdempotencyStore.this.clock.instant();
			Instant leaseUntil = now.plus(this.request.leaseTtl());
			// kept for the retention past the lease, as a claim is: a run that crashed after
			// running longer than the retention leaves its attempt and recovery point to the takeover
			Instant renewedExpiry = leaseUntil.plus(this.request.retention());
			Instant expiresAt = renewedExpiry.isAfter(record.expiresAt()) ? renewedExpiry : record.expiresAt();
			return new IdempotencyRecord(record.id(), record.status(), record.fingerprint(), record.owner(),
					record.attempt(), leaseUntil, (recoveryPoint != null) ? recoveryPoint : record.recoveryPoint(),
					null, null, null, record.createdAt(), now, expiresAt);
		}

		private boolean update(UnaryOperator<IdempotencyRecord> update) {
			boolean[] updated = new boolean[1];
			MemoryIdempotencyStore.this.records.computeIfPresent(this.request.id(), (key, record) -> {
				updated[0] = isOwned(record);
				return updated[0] ? update.apply(record) : record;
			});
			return updated[0];
		}

		private boolean isOwned(IdempotencyRecord record) {
			return record.status() == RecordStatus.IN_PROGRESS && record.owner().equals(this.request.owner())
					&& !record.isExpired(MemoryIdempotencyStore.this.clock.instant());
		}

	}

}
