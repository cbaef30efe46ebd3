package io.github.idempotency.store.redis;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.ClaimRules;
import io.github.idempotency.store.IdempotencyRecord;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.SetCondition;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.types.Expiration;
import org.springframework.util.Assert;

/**
 * The claim of one key, and the answers every claim shares. First one native command,
 * {@code SET key record NX GET PX lease+retention} (Redis 7.0 or later): it writes the new
 * record when the key is free, and otherwise answers the record found, from which the
 * claim decides on the client ({@link ClaimRules#decide}) a duplicate, a failure, a
 * mismatch or a live claim, with no script. Only what needs a conditional write goes on to
 * {@code claim.lua}, which decides again atomically: a record whose lease or retention ran
 * out (a takeover, or a new record in its place), and what {@link LegacyFallbacks} leaves
 * to it (a record of layout 0, a server before 7.0).
 */
final class SingleClaim {

	private final RedisAccess access;

	private final Completions completions;

	private final LegacyFallbacks legacy;

	SingleClaim(RedisAccess access, Completions completions, LegacyFallbacks legacy) {
		this.access = access;
		this.completions = completions;
		this.legacy = legacy;
	}

	ClaimResult claim(ClaimRequest request) {
		long now = this.access.now();
		if (this.legacy.claimsByScriptOnly()) {
			return byScript(request, now);
		}
		Instant at = Instant.ofEpochMilli(now);
		IdempotencyRecord fresh = ClaimRules.claimed(null, request, at);
		byte[] key = this.access.keyBytes(request.id());
		byte[] ownerToken = RecordToken.of(request.owner());
		byte[] value = CompactRecord.encode(fresh, ownerToken);
		Expiration ttl = Expiration.milliseconds(request.leaseTtl().toMillis() + request.retention().toMillis());
		byte[] found;
		try {
			found = this.access.redis.execute((RedisCallback<byte[]>) (connection) -> connection.stringCommands()
				.setGet(key, value, SetCondition.ifAbsent(), ttl));
		}
		catch (DataAccessException ex) {
			if (this.legacy.leavesClaimToScript(ex)) {
				return byScript(request, now);
			}
			throw ex;
		}
		if (found == null) {
			return ClaimResult.acquired(fresh, new RedisClaim(this.completions, request, fresh, value, key, ownerToken));
		}
		ClaimResult answered = answered(request, found, at);
		return (answered != null) ? answered : byScript(request, now);
	}

	/** A claim by {@code claim.lua} alone. */
	private ClaimResult byScript(ClaimRequest request, long now) {
		List<Object> args = new ArrayList<>(5);
		args.add(String.valueOf(now));
		args.addAll(Arrays.asList(scriptArguments(request)));
		List<?> replies = this.access.run(RedisScripts.CLAIM, this.access.key(request.id()), args.toArray());
		Assert.state(replies != null && replies.size() == 1, "The claim script answered nothing");
		return claimed(request, (List<?>) replies.get(0), now);
	}

	/**
	 * The answer a record found for a claim gives: a duplicate, a failure, a mismatch or a
	 * live claim; {@code null} when the record is over or its lease ran out, which only the
	 * claim script may replace, atomically.
	 * @param request the claim
	 * @param value the record found (layout 1)
	 * @param at now
	 * @return the answer, or {@code null} for the claim script
	 */
	static @Nullable ClaimResult answered(ClaimRequest request, byte[] value, Instant at) {
		IdempotencyRecord existing = CompactRecord.decode(request.id(), value);
		ClaimOutcome outcome = ClaimRules.decide(existing, request.fingerprint(), at);
		return (outcome != ClaimOutcome.ACQUIRED) ? ClaimResult.of(outcome, existing) : null;
	}

	/**
	 * The answer of {@code claim.lua} for one key: {@code { outcome }} for a new record (the
	 * rules say every field of it), else {@code { outcome, record }}.
	 * @param request the claim
	 * @param reply the key's reply
	 * @param now the time sent to the script
	 * @return the claim's result
	 */
	ClaimResult claimed(ClaimRequest request, List<?> reply, long now) {
		Assert.state(!reply.isEmpty(), "The claim script answered nothing");
		ClaimOutcome outcome = ClaimOutcome.valueOf(RedisAccess.text(reply.get(0)));
		// a new record: the script wrote exactly what the rules say, and sent nothing back
		IdempotencyRecord record = (reply.size() == 1) ? ClaimRules.claimed(null, request, Instant.ofEpochMilli(now))
				: CompactRecord.decode(request.id(), (byte[]) reply.get(1));
		if (outcome != ClaimOutcome.ACQUIRED) {
			return ClaimResult.of(outcome, record);
		}
		// a takeover answers the value it wrote; a new record's value is not known here
		return ClaimResult.acquired(record, acquired(request, record, (reply.size() == 1) ? null : (byte[]) reply.get(1),
				this.access.keyBytes(request.id()), RecordToken.of(request.owner())));
	}

	/** The handle of a record this store claimed. */
	RedisClaim acquired(ClaimRequest request, IdempotencyRecord record, byte @Nullable [] written, byte[] key,
			byte[] ownerToken) {
		return new RedisClaim(this.completions, request, record, written, key, ownerToken);
	}

	/**
	 * The arguments of {@code claim.lua} for one key: owner and fingerprint tokens
	 * ({@code ''} for no fingerprint), lease and retention in milliseconds.
	 * @param request the claim
	 * @return the arguments
	 */
	static byte[][] scriptArguments(ClaimRequest request) {
		return new byte[][] { RecordToken.of(request.owner()),
				(request.fingerprint() != null) ? RecordToken.of(request.fingerprint()) : new byte[0],
				RedisAccess.number(request.leaseTtl().toMillis()), RedisAccess.number(request.retention().toMillis()) };
	}

}
