package io.github.idempotency.store.memory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.UnaryOperator;

import org.jspecify.annotations.Nullable;

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
			result[0] = ClaimResult.of(outcome, claimed);
			return claimed;
		});
		return result[0];
	}

	@Override
	public boolean complete(RecordId id, String owner, @Nullable String response, Duration retention) {
		return updateOwned(id, owner, (record) -> {
			Instant now = this.clock.instant();
			return new IdempotencyRecord(id, RecordStatus.COMPLETED, record.fingerprint(), owner, record.attempt(),
					record.leaseUntil(), record.recoveryPoint(), response, null, null, record.createdAt(), now,
					now.plus(retention));
		});
	}

	@Override
	public boolean fail(RecordId id, String owner, String errorType, @Nullable String errorMessage,
			Duration retention) {
		return updateOwned(id, owner, (record) -> {
			Instant now = this.clock.instant();
			return new IdempotencyRecord(id, RecordStatus.FAILED, record.fingerprint(), owner, record.attempt(),
					record.leaseUntil(), record.recoveryPoint(), null, errorType, errorMessage, record.createdAt(), now,
					now.plus(retention));
		});
	}

	@Override
	public boolean release(RecordId id, String owner) {
		boolean[] released = new boolean[1];
		this.records.computeIfPresent(id, (key, record) -> {
			released[0] = isOwned(record, owner);
			return released[0] ? null : record;
		});
		return released[0];
	}

	@Override
	public boolean renew(RecordId id, String owner, Duration leaseTtl) {
		return updateOwned(id, owner, (record) -> withLease(record, null, leaseTtl));
	}

	@Override
	public boolean saveRecoveryPoint(RecordId id, String owner, String recoveryPoint, Duration leaseTtl) {
		return updateOwned(id, owner, (record) -> withLease(record, recoveryPoint, leaseTtl));
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

	private IdempotencyRecord withLease(IdempotencyRecord record, @Nullable String recoveryPoint, Duration leaseTtl) {
		Instant now = this.clock.instant();
		Instant leaseUntil = now.plus(leaseTtl);
		Instant expiresAt = leaseUntil.isAfter(record.expiresAt()) ? leaseUntil : record.expiresAt();
		return new IdempotencyRecord(record.id(), record.status(), record.fingerprint(), record.owner(),
				record.attempt(), leaseUntil, (recoveryPoint != null) ? recoveryPoint : record.recoveryPoint(), null,
				null, null, record.createdAt(), now, expiresAt);
	}

	private boolean updateOwned(RecordId id, String owner, UnaryOperator<IdempotencyRecord> update) {
		boolean[] updated = new boolean[1];
		this.records.computeIfPresent(id, (key, record) -> {
			updated[0] = isOwned(record, owner);
			return updated[0] ? update.apply(record) : record;
		});
		return updated[0];
	}

	private boolean isOwned(IdempotencyRecord record, String owner) {
		return record.status() == RecordStatus.IN_PROGRESS && record.owner().equals(owner)
				&& !record.isExpired(this.clock.instant());
	}

}
