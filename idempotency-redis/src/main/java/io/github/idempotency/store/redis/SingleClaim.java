package io.github.idempotency.store.redis;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import java.util.Objects;

import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.ClaimRules;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.SetCondition;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.types.Expiration;
import org.springframework.util.Assert;

/**
 * The claim of one key (the answers every claim shares are {@link ClaimAnswer}'s). First
 * one native command, {@code SET key record NX GET PX lease+retention} (Redis 7.0 or later): it writes the new
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
		ClaimState fresh = ClaimState.fresh(request, this.access.keyBytes(request.id()), now);
		byte[] value = Objects.requireNonNull(fresh.written());
		Expiration ttl = Expiration.milliseconds(fresh.timeToLive());
		byte[] found;
		try {
			found = this.access.redis.execute((RedisCallback<byte[]>) (connection) -> connection.stringCommands()
				.setGet(fresh.key, value, SetCondition.ifAbsent(), ttl));
		}
		catch (DataAccessException ex) {
			if (this.legacy.leavesClaimToScript(ex)) {
				return byScript(request, now);
			}
			throw ex;
		}
		if (found == null) {
			return result(ClaimAnswer.acquired(fresh));
		}
		ClaimAnswer answered = ClaimAnswer.found(request, found, Instant.ofEpochMilli(now));
		return (answered != null) ? result(answered) : byScript(request, now);
	}

	/** A claim by {@code claim.lua} alone. */
	private ClaimResult byScript(ClaimRequest request, long now) {
		List<Object> args = new ArrayList<>(5);
		args.add(String.valueOf(now));
		args.addAll(Arrays.asList(ClaimAnswer.scriptArguments(request)));
		List<?> replies = this.access.run(RedisScripts.CLAIM, this.access.key(request.id()), args.toArray());
		Assert.state(replies != null && replies.size() == 1, "The claim script answered nothing");
		return result(ClaimAnswer.scripted(request, (List<?>) replies.get(0), now, this.access.keyBytes(request.id())));
	}

	/**
	 * The result of an answer, an acquired claim with this store's handle.
	 * @param answer the answer
	 * @return the claim's result
	 */
	ClaimResult result(ClaimAnswer answer) {
		ClaimState acquired = answer.acquired();
		return (acquired != null) ? ClaimResult.acquired(answer.record(), new RedisClaim(this.completions, acquired))
				: ClaimResult.of(answer.outcome(), answer.record());
	}

}
