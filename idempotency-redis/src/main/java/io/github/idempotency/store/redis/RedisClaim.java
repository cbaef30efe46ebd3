package io.github.idempotency.store.redis;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordStatus;

/**
 * A claim held by its lease: each step is one script, fenced by the owner. It keeps the
 * record it claimed and, while it knows it, the value that record has in Redis (the value
 * it wrote, until a renewal or a recovery point changes it), so that its completion can
 * compare values instead of reading the record; and, made once, its Redis key and its
 * owner's token.
 */
final class RedisClaim implements ClaimHandle {

	private final Completions completions;

	private final ClaimRequest request;

	private final IdempotencyRecord claimed;

	private volatile byte @Nullable [] written;

	final byte[] key;

	private final byte[] ownerToken;

	RedisClaim(Completions completions, ClaimRequest request, IdempotencyRecord claimed, byte @Nullable [] written,
			byte[] key, byte[] ownerToken) {
		this.completions = completions;
		this.request = request;
		this.claimed = claimed;
		this.written = written;
		this.key = key;
		this.ownerToken = ownerToken;
	}

	/** Whether this claim was made by the store that {@code completions} completes for. */
	boolean isOf(Completions completions) {
		return this.completions == completions;
	}

	ClaimRequest request() {
		return this.request;
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

	@Override
	public boolean complete(@Nullable String response) {
		return this.completions.finish(this, RecordStatus.COMPLETED, response, null, null);
	}

	@Override
	public boolean fail(Throwable failure) {
		return this.completions.finish(this, RecordStatus.FAILED, null, IdempotencyRecord.errorTypeOf(failure),
				IdempotencyRecord.errorMessageOf(failure));
	}

	@Override
	public boolean release(Throwable failure) {
		RedisAccess access = this.completions.access();
		return isOne(access.run(RedisScripts.RELEASE, access.key(this.request.id()), this.ownerToken,
				String.valueOf(access.now())));
	}

	@Override
	public boolean renew() {
		// from now on the value in Redis is not the one written
		this.written = null;
		RedisAccess access = this.completions.access();
		long now = access.now();
		return isOne(access.run(RedisScripts.RENEW, access.key(this.request.id()), this.ownerToken,
				String.valueOf(now), String.valueOf(now + this.request.leaseTtl().toMillis()),
				String.valueOf(this.request.retention().toMillis())));
	}

	@Override
	public boolean saveRecoveryPoint(String recoveryPoint) {
		this.written = null;
		RedisAccess access = this.completions.access();
		long now = access.now();
		return isOne(access.run(RedisScripts.RENEW, access.key(this.request.id()), this.ownerToken,
				String.valueOf(now), String.valueOf(now + this.request.leaseTtl().toMillis()),
				String.valueOf(this.request.retention().toMillis()), recoveryPoint));
	}

	private static boolean isOne(@Nullable Long reply) {
		return reply != null && reply == 1L;
	}

}
