package io.github.idempotency.store.redis;

import java.time.Instant;
import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimRules;
import io.github.idempotency.store.IdempotencyRecord;

/**
 * The answer to one claim, decoded from what Redis replied, before a store wraps it in its
 * own result type: each store, blocking or not, makes its handle of {@link #acquired()}.
 * Nothing here talks to Redis.
 *
 * @param outcome what the claim found
 * @param record the record, as the claim results say
 * @param acquired the acquired claim, {@code null} for every other outcome
 */
record ClaimAnswer(ClaimOutcome outcome, IdempotencyRecord record, @Nullable ClaimState acquired) {

	/**
	 * A free key claimed by {@code SET NX GET}.
	 * @param fresh the claim that wrote it
	 * @return the answer
	 */
	static ClaimAnswer acquired(ClaimState fresh) {
		return new ClaimAnswer(ClaimOutcome.ACQUIRED, fresh.claimed(), fresh);
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
	static @Nullable ClaimAnswer found(ClaimRequest request, byte[] value, Instant at) {
		IdempotencyRecord existing = CompactRecord.decode(request.id(), value);
		ClaimOutcome outcome = ClaimRules.decide(existing, request.fingerprint(), at);
		return (outcome != ClaimOutcome.ACQUIRED) ? new ClaimAnswer(outcome, existing, null) : null;
	}

	/**
	 * The answer of {@code claim.lua} for one key: {@code { outcome }} for a new record (the
	 * rules say every field of it), else {@code { outcome, record }}.
	 * @param request the claim
	 * @param reply the key's reply, bulk strings as bytes
	 * @param now the time sent to the script
	 * @param key the record's key
	 * @return the claim's answer
	 */
	static ClaimAnswer scripted(ClaimRequest request, List<?> reply, long now, byte[] key) {
		if (reply.isEmpty()) {
			throw new IllegalStateException("The claim script answered nothing");
		}
		ClaimOutcome outcome = ClaimOutcome.valueOf(RedisAccess.text(reply.get(0)));
		// a new record: the script wrote exactly what the rules say, and sent nothing back
		byte @Nullable [] value = (reply.size() == 1) ? null : (byte[]) reply.get(1);
		IdempotencyRecord record = (value == null) ? ClaimRules.claimed(null, request, Instant.ofEpochMilli(now))
				: CompactRecord.decode(request.id(), value);
		if (outcome != ClaimOutcome.ACQUIRED) {
			return new ClaimAnswer(outcome, record, null);
		}
		// a takeover answers the value it wrote; a new record's value is not known here
		return new ClaimAnswer(outcome, record,
				new ClaimState(request, record, value, key, RecordToken.of(request.owner())));
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
