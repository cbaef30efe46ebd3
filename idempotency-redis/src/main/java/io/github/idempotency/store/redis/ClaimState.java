package io.github.idempotency.store.redis;

import java.time.Instant;
import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimRules;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordStatus;

/**
 * What an acquired claim knows, whichever store's handle holds it (blocking
 * {@link RedisClaim} or non-blocking {@link ReactiveRedisClaim}), and the arguments of the
 * scripts of its steps: the record it claimed and, while it knows it, the value that
 * record has in Redis (the value it wrote, until a renewal or a recovery point changes it),
 * so that its completion can compare values instead of reading the record; and, made once,
 * its Redis key and its owner's token. Nothing here talks to Redis.
 */
final class ClaimState {

	private final ClaimRequest request;

	private final IdempotencyRecord claimed;

	private volatile byte @Nullable [] written;

	final byte[] key;

	final byte[] ownerToken;

	ClaimState(ClaimRequest request, IdempotencyRecord claimed, byte @Nullable [] written, byte[] key,
			byte[] ownerToken) {
		this.request = request;
		this.claimed = claimed;
		this.written = written;
		this.key = key;
		this.ownerToken = ownerToken;
	}

	/**
	 * The claim a free key gets: the record the rules say, encoded for
	 * {@code SET key value NX GET PX ttl}, which is then the value it knows.
	 * @param request the claim
	 * @param key the record's key
	 * @param now now, in epoch milliseconds
	 * @return the claim, its value in {@link #written()}
	 */
	static ClaimState fresh(ClaimRequest request, byte[] key, long now) {
		IdempotencyRecord record = ClaimRules.claimed(null, request, Instant.ofEpochMilli(now));
		byte[] ownerToken = RecordToken.of(request.owner());
		return new ClaimState(request, record, CompactRecord.encode(record, ownerToken), key, ownerToken);
	}

	ClaimRequest request() {
		return this.request;
	}

	/** The record as claimed. */
	IdempotencyRecord claimed() {
		return this.claimed;
	}

	/** The value the record has in Redis, while this claim knows it. */
	byte @Nullable [] written() {
		return this.written;
	}

	/** The time to live of a claimed record: lease + retention, in milliseconds. */
	long timeToLive() {
		return this.request.leaseTtl().toMillis() + this.request.retention().toMillis();
	}

	/**
	 * The arguments of {@code finish.lua} for this claim: owner token, retention, the
	 * value the record is expected to have ({@code ''} when not known, or when that value
	 * is over at {@code now}) and the finished record as this claim would write it.
	 */
	byte[][] finishArguments(long now, RecordStatus status, @Nullable String response, @Nullable String errorType,
			@Nullable String errorMessage) {
		IdempotencyRecord claimed = this.claimed;
		byte[] expected = this.written;
		if (expected == null || claimed.expiresAt().toEpochMilli() <= now) {
			expected = new byte[0];
		}
		Instant at = Instant.ofEpochMilli(now);
		long retention = this.request.retention().toMillis();
		IdempotencyRecord finished = new IdempotencyRecord(claimed.id(), status, claimed.fingerprint(),
				claimed.owner(), claimed.attempt(), claimed.leaseUntil(), claimed.recoveryPoint(), response, errorType,
				errorMessage, claimed.createdAt(), at, at.plusMillis(retention));
		return new byte[][] { this.ownerToken, RedisAccess.number(retention), expected,
				CompactRecord.encode(finished, this.ownerToken) };
	}

	/**
	 * The arguments of {@code finish.lua} for one key, {@code now} first.
	 * @param now now, in epoch milliseconds
	 * @param failure what the operation threw, {@code null} to complete
	 * @param response the response of a completion
	 * @return the arguments
	 */
	byte[][] finishCall(long now, @Nullable Throwable failure, @Nullable String response) {
		byte[][] own = (failure != null)
				? finishArguments(now, RecordStatus.FAILED, null, IdempotencyRecord.errorTypeOf(failure),
						IdempotencyRecord.errorMessageOf(failure))
				: finishArguments(now, RecordStatus.COMPLETED, response, null, null);
		byte[][] arguments = new byte[own.length + 1][];
		arguments[0] = RedisAccess.number(now);
		System.arraycopy(own, 0, arguments, 1, own.length);
		return arguments;
	}

	/** The arguments of {@code release.lua}: owner token, now. */
	byte[][] releaseArguments(long now) {
		return new byte[][] { this.ownerToken, RedisAccess.number(now) };
	}

	/**
	 * The arguments of {@code renew.lua}: owner token, now, the new lease's end, retention,
	 * and the recovery point when one is given. From then on the value in Redis is not the
	 * one written.
	 */
	byte[][] renewArguments(long now, @Nullable String recoveryPoint) {
		this.written = null;
		byte[] owner = this.ownerToken;
		byte[] at = RedisAccess.number(now);
		byte[] leaseUntil = RedisAccess.number(now + this.request.leaseTtl().toMillis());
		byte[] retention = RedisAccess.number(this.request.retention().toMillis());
		return (recoveryPoint != null)
				? new byte[][] { owner, at, leaseUntil, retention, RedisAccess.bytes(recoveryPoint) }
				: new byte[][] { owner, at, leaseUntil, retention };
	}

	/** Whether a reply of {@code release.lua} or {@code renew.lua} says the step was done. */
	static boolean isOne(@Nullable Object reply) {
		return reply instanceof Long number && number == 1L;
	}

	/** Whether the reply of {@code finish.lua} for one key says it was finished. */
	static boolean isFinished(@Nullable List<?> reply) {
		return reply != null && reply.size() == 1 && isOne(reply.get(0));
	}

}
