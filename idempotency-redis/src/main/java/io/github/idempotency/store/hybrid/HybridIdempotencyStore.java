package io.github.idempotency.store.hybrid;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

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
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.util.Assert;

/**
 * Redis as a read-through cache of finished records in front of a source-of-truth store
 * (the jdbc store in production).
 * <p>
 * A claim first reads the cache (one {@code HGETALL}): a finished record there answers
 * {@code DUPLICATE}, {@code FAILED} or {@code MISMATCH} (the cached record carries its
 * fingerprint) without touching the source of truth. Everything else goes to the source
 * of truth. A completion or failure is written there first and then cached, for
 * {@code cacheTtl} but never beyond the record's own expiry, once the transaction it was
 * written in (if any) commits; a claim that the source of truth answers with a finished
 * record caches it too, unless it read it inside a transaction (it may be that
 * transaction's own, uncommitted row). Delete evicts.
 * <p>
 * The cache never holds a record still in progress nor one rolled back, so it cannot
 * answer a claim that the source of truth would answer differently; its only staleness is
 * a record deleted by hand racing a claim that is caching it.
 * <p>
 * When Redis cannot be reached, every step goes to the source of truth alone: answers
 * stay right, only slower. After an error the cache is left alone for one second, then
 * tried again, so an outage costs one Redis timeout per second rather than one per call.
 * The first error of an outage is logged as a WARN, the return as an INFO;
 * {@link #cacheErrors()} counts the errors. {@link #delete(RecordId)} is the exception:
 * it must evict, so it fails while Redis cannot be reached rather than leave a cached
 * copy of a deleted record behind.
 * <p>
 * A batch reads the cache for all its requests in one pipelined round trip (one
 * {@code HGETALL} per key, sent before any answer is awaited: one round trip per node on a
 * cluster) and sends only the requests the cache did not answer to the source of truth,
 * in one {@link IdempotencyStore#claimAll claimAll}; {@link #completeAll} is the source of
 * truth's, and its completions are cached together, on the same terms as one.
 */
public final class HybridIdempotencyStore implements IdempotencyStore {

	private final IdempotencyStore sourceOfTruth;

	private final RecordCache cache;

	private final Clock clock;

	/**
	 * Creates a store that caches the finished records of {@code sourceOfTruth}.
	 * @param sourceOfTruth the store that decides
	 * @param connectionFactory the Redis connections of the cache
	 * @param keyPrefix the first part of every cache key (followed by {@code :cache:})
	 * @param cacheTtl how long a finished record stays cached at most
	 * @param clock the time expiry is measured on
	 */
	public HybridIdempotencyStore(IdempotencyStore sourceOfTruth, RedisConnectionFactory connectionFactory,
			String keyPrefix, Duration cacheTtl, Clock clock) {
		Assert.hasText(keyPrefix, "'keyPrefix' must not be empty");
		Assert.isTrue(keyPrefix.indexOf('{') < 0 && keyPrefix.indexOf('}') < 0,
				"'keyPrefix' must not contain braces: they would move the cluster hash tag");
		Assert.isTrue(!cacheTtl.isNegative() && !cacheTtl.isZero(), "'cacheTtl' must be positive");
		this.sourceOfTruth = sourceOfTruth;
		this.cache = new RecordCache(connectionFactory, keyPrefix, cacheTtl, clock);
		this.clock = clock;
	}

	@Override
	public ClaimResult claim(ClaimRequest request) {
		IdempotencyRecord cached = this.cache.read(request.id());
		if (cached != null) {
			ClaimOutcome outcome = ClaimRules.decide(cached, request.fingerprint(), this.clock.instant());
			if (outcome != ClaimOutcome.ACQUIRED && outcome != ClaimOutcome.IN_PROGRESS) {
				return ClaimResult.of(outcome, cached);
			}
		}
		ClaimResult result = this.sourceOfTruth.claim(request);
		if (result.outcome() == ClaimOutcome.ACQUIRED) {
			return ClaimResult.acquired(result.record(), new CachingClaim(result.acquiredHandle(), result.record(),
					request.retention()));
		}
		if (result.record().status() != RecordStatus.IN_PROGRESS
				&& !TransactionSynchronizationManager.isActualTransactionActive()) {
			// inside a transaction the record read may be that transaction's own, not committed
			this.cache.put(result.record());
		}
		return result;
	}

	/**
	 * Reads the cache for every request in one pipelined round trip; the requests it does
	 * not answer go to the source of truth in one {@code claimAll}.
	 */
	@Override
	public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
		if (requests.size() <= 1) {
			return requests.isEmpty() ? List.of() : List.of(claim(requests.get(0)));
		}
		List<@Nullable IdempotencyRecord> cached = this.cache.readAll(requests);
		Instant now = this.clock.instant();
		ClaimResult[] results = new ClaimResult[requests.size()];
		List<Integer> misses = new ArrayList<>();
		for (int i = 0; i < requests.size(); i++) {
			IdempotencyRecord record = cached.get(i);
			ClaimOutcome outcome = (record != null) ? ClaimRules.decide(record, requests.get(i).fingerprint(), now)
					: ClaimOutcome.ACQUIRED;
			if (outcome != ClaimOutcome.ACQUIRED && outcome != ClaimOutcome.IN_PROGRESS) {
				results[i] = ClaimResult.of(outcome, record);
			}
			else {
				misses.add(i);
			}
		}
		if (!misses.isEmpty()) {
			List<ClaimRequest> missed = new ArrayList<>(misses.size());
			misses.forEach((i) -> missed.add(requests.get(i)));
			List<ClaimResult> claimed = this.sourceOfTruth.claimAll(missed);
			// inside a transaction the records read may be that transaction's own, not committed
			boolean cacheable = !TransactionSynchronizationManager.isActualTransactionActive();
			List<IdempotencyRecord> finished = new ArrayList<>();
			for (int j = 0; j < misses.size(); j++) {
				ClaimResult result = claimed.get(j);
				if (result.outcome() == ClaimOutcome.ACQUIRED) {
					result = ClaimResult.acquired(result.record(), new CachingClaim(result.acquiredHandle(),
							result.record(), missed.get(j).retention()));
				}
				else if (cacheable && result.record().status() != RecordStatus.IN_PROGRESS) {
					finished.add(result.record());
				}
				results[misses.get(j)] = result;
			}
			this.cache.putAll(finished);
		}
		return Arrays.asList(results);
	}

	/**
	 * Completes the claims in the source of truth with one {@code completeAll}, then
	 * caches the completed records (in one pipelined round trip) once the transaction
	 * they were written in, if any, commits. Handles of another store go the default way.
	 */
	@Override
	public List<Boolean> completeAll(List<ClaimHandle> handles, List<@Nullable String> responses) {
		Assert.isTrue(handles.size() == responses.size(), "One response per handle is required");
		if (handles.size() <= 1 || !handles.stream().allMatch(this::isOwnClaim)) {
			return IdempotencyStore.super.completeAll(handles, responses);
		}
		List<ClaimHandle> claims = new ArrayList<>(handles.size());
		handles.forEach((handle) -> claims.add(((CachingClaim) handle).claim));
		List<Boolean> completed = this.sourceOfTruth.completeAll(claims, responses);
		List<IdempotencyRecord> finished = new ArrayList<>(handles.size());
		for (int i = 0; i < handles.size(); i++) {
			if (Boolean.TRUE.equals(completed.get(i))) {
				finished.add(((CachingClaim) handles.get(i)).finished(RecordStatus.COMPLETED, responses.get(i), null,
						null));
			}
		}
		this.cache.putOnceCommitted(finished);
		return completed;
	}

	private boolean isOwnClaim(ClaimHandle handle) {
		return handle instanceof CachingClaim claim && claim.store() == this;
	}

	@Override
	public Optional<IdempotencyRecord> find(RecordId id) {
		return this.sourceOfTruth.find(id);
	}

	/**
	 * Deletes the record from the cache, then from the source of truth, then from the cache
	 * again (in case a claim cached it in between).
	 * @throws RuntimeException the Redis error when the cache cannot be reached: the
	 * record is then left in place
	 */
	@Override
	public boolean delete(RecordId id) {
		this.cache.delete(id);
		boolean deleted = this.sourceOfTruth.delete(id);
		this.cache.evict(id);
		return deleted;
	}

	@Override
	public String backend() {
		return "hybrid";
	}

	/**
	 * How many cache operations failed since this store was created.
	 * @return the count of Redis errors
	 */
	public long cacheErrors() {
		return this.cache.errors();
	}

	/**
	 * The source of truth behind the cache.
	 * @return the store that decides
	 */
	public IdempotencyStore sourceOfTruth() {
		return this.sourceOfTruth;
	}

	/**
	 * The cache key of a record.
	 * @param id the record
	 * @return {@code <prefix>:cache:{<workflow length>:<workflow>:<key>}}
	 */
	String key(RecordId id) {
		return this.cache.key(id);
	}

	/**
	 * The source of truth's claim, whose finished record is cached once it is committed.
	 */
	private final class CachingClaim implements ClaimHandle {

		private final ClaimHandle claim;

		private final IdempotencyRecord claimed;

		private final Duration retention;

		CachingClaim(ClaimHandle claim, IdempotencyRecord claimed, Duration retention) {
			this.claim = claim;
			this.claimed = claimed;
			this.retention = retention;
		}

		HybridIdempotencyStore store() {
			return HybridIdempotencyStore.this;
		}

		@Override
		public boolean complete(@Nullable String response) {
			boolean completed = this.claim.complete(response);
			if (completed) {
				HybridIdempotencyStore.this.cache
					.putOnceCommitted(List.of(finished(RecordStatus.COMPLETED, response, null, null)));
			}
			return completed;
		}

		@Override
		public boolean fail(Throwable failure) {
			boolean failed = this.claim.fail(failure);
			if (failed) {
				HybridIdempotencyStore.this.cache.putOnceCommitted(List.of(finished(RecordStatus.FAILED, null,
						IdempotencyRecord.errorTypeOf(failure), IdempotencyRecord.errorMessageOf(failure))));
			}
			return failed;
		}

		@Override
		public boolean release(Throwable failure) {
			return this.claim.release(failure);
		}

		@Override
		public boolean abandon() {
			return this.claim.abandon();
		}

		@Override
		public boolean joinsTransaction() {
			return this.claim.joinsTransaction();
		}

		@Override
		public boolean renew() {
			return this.claim.renew();
		}

		@Override
		public boolean saveRecoveryPoint(String recoveryPoint) {
			return this.claim.saveRecoveryPoint(recoveryPoint);
		}

		private IdempotencyRecord finished(RecordStatus status, @Nullable String response, @Nullable String errorType,
				@Nullable String errorMessage) {
			Instant now = HybridIdempotencyStore.this.clock.instant();
			IdempotencyRecord claimed = this.claimed;
			return new IdempotencyRecord(claimed.id(), status, claimed.fingerprint(), claimed.owner(),
					claimed.attempt(), claimed.leaseUntil(), claimed.recoveryPoint(), response, errorType,
					errorMessage, claimed.createdAt(), now, now.plus(this.retention));
		}

	}

}
