package io.github.idempotency.store.redis;

import java.util.Arrays;
import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.ReadFirst;

/**
 * The claim of a batch, in up to three steps (their calls and answers are
 * {@link BatchSteps}'s), each one script call per cluster hash slot (one call on a single
 * node), all calls of a step sent before any answer is awaited:
 * <ol>
 * <li>When the workflow reads first ({@link ReadFirst}: by default while most of its
 * recent batch elements were answered from records), {@code read.lua} (an {@code MGET}):
 * a key whose record it finds is decided from that record on the client, as a single claim
 * decides on what {@code SET NX GET} answers, with nothing written or encoded.</li>
 * <li>{@code claim_new.lua} for the keys not answered yet: the single claim's
 * {@code SET key record NX GET PX ttl} for each, nothing decoded on the server; a free key
 * is claimed, a taken one answers its value (one written since the read too), decided on
 * the client.</li>
 * <li>{@code claim.lua} for the keys that need a conditional write (an expired lease or
 * retention, and what {@link LegacyFallbacks} leaves to it), which decides again
 * atomically.</li>
 * </ol>
 * A key named twice is written by its first {@code SET} only (one slot, one call, in
 * order): the second answers the first's live claim. When a call fails, the claims the
 * others acquired are released before its failure is thrown.
 */
final class BatchClaim {

	private final RedisAccess access;

	private final SingleClaim single;

	private final LegacyFallbacks legacy;

	private final ReadFirst.Choices choices = new ReadFirst.Choices();

	private volatile ReadFirst readFirst = ReadFirst.ADAPTIVE;

	BatchClaim(RedisAccess access, SingleClaim single, LegacyFallbacks legacy) {
		this.access = access;
		this.single = single;
		this.legacy = legacy;
	}

	void setReadFirst(ReadFirst readFirst) {
		this.readFirst = readFirst;
	}

	/**
	 * Claims two or more keys.
	 * @param requests the claims
	 * @return their results in order, or {@code null} when the connection is not Lettuce's
	 * (see {@link LegacyFallbacks}): the caller then goes key by key
	 */
	@Nullable List<ClaimResult> claimAll(List<ClaimRequest> requests) {
		BatchSteps steps = new BatchSteps(requests, (request) -> this.access.keyBytes(request.id()), this.access.now());
		@Nullable ClaimResult[] results = new ClaimResult[requests.size()];
		RuntimeException failure = null;
		if (this.legacy.claimsByScriptOnly()) {
			steps.allByScript();
		}
		else {
			ReadFirst mode = this.readFirst;
			if (steps.readsFirst(this.choices, mode)) {
				SlotGroupedScript.Replies found = RedisScripts.READ_ALL.run(this.access.connectionFactory, List.of(),
						steps.readCalls(), this.access.batchTimeout, SlotGroupedScript.NOTHING_AFTERWARDS);
				if (found == null) {
					return null;
				}
				RuntimeException unreadable = found.failure();
				if (unreadable != null) {
					// nothing claimed yet
					throw unreadable;
				}
				steps.answerRead(found.replies);
			}
			List<SlotGroupedScript.Call> calls = steps.claimNewCalls();
			if (!calls.isEmpty()) {
				SlotGroupedScript.Replies replies = RedisScripts.CLAIM_NEW_ALL.run(this.access.connectionFactory,
						List.of(), calls, this.access.batchTimeout, SlotGroupedScript.NOTHING_AFTERWARDS);
				if (replies == null) {
					return null;
				}
				steps.answerClaimNew(replies, this.legacy::leavesClaimToScript);
				failure = replies.failure();
			}
			steps.record(this.choices, mode);
		}
		if (failure == null && !steps.byScript().isEmpty()) {
			SlotGroupedScript.Replies replies = RedisScripts.CLAIM_ALL.run(this.access.connectionFactory,
					steps.scriptLeading(), steps.scriptCalls(), this.access.batchTimeout,
					SlotGroupedScript.NOTHING_AFTERWARDS);
			if (replies == null) {
				for (int i : steps.byScript()) {
					results[i] = this.single.claim(requests.get(i));
				}
			}
			else {
				steps.answerScript(replies);
				failure = replies.failure();
			}
		}
		@Nullable ClaimAnswer[] answers = steps.answers();
		for (int i = 0; i < results.length; i++) {
			ClaimAnswer answer = answers[i];
			if (results[i] == null && answer != null) {
				results[i] = this.single.result(answer);
			}
		}
		if (failure != null) {
			for (ClaimResult result : results) {
				if (result != null && result.handle() != null) {
					try {
						result.handle().release(failure);
					}
					catch (RuntimeException releaseFailure) {
						failure.addSuppressed(releaseFailure);
					}
				}
			}
			throw failure;
		}
		return Arrays.asList(results);
	}

}
