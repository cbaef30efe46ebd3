package io.github.idempotency.store.redis;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.ClaimRules;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.ReadFirst;
import org.springframework.data.redis.RedisSystemException;

/**
 * The claim of a batch, in up to three steps, each one script call per cluster hash slot
 * (one call on a single node), all calls of a step sent before any answer is awaited:
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
		long now = this.access.now();
		int size = requests.size();
		@Nullable ClaimResult[] results = new ClaimResult[size];
		List<Integer> byScript = new ArrayList<>();
		RuntimeException failure = null;
		if (this.legacy.claimsByScriptOnly()) {
			IntStream.range(0, size).forEach(byScript::add);
		}
		else {
			Instant at = Instant.ofEpochMilli(now);
			ReadFirst mode = this.readFirst;
			int[] unread = IntStream.range(0, size).toArray();
			if (this.choices.readsFirst(mode, requests.get(0).id().workflow())) {
				SlotGroupedScript.Replies found = read(requests);
				if (found == null) {
					return null;
				}
				RuntimeException unreadable = found.failure();
				if (unreadable != null) {
					// nothing claimed yet
					throw unreadable;
				}
				unread = answer(requests, found, at, results, byScript);
			}
			if (unread.length > 0) {
				SlotGroupedScript.Replies replies = claimNew(requests, unread, at, results, byScript);
				if (replies == null) {
					return null;
				}
				failure = replies.failure();
			}
			for (int i = 0; i < size; i++) {
				ClaimResult result = results[i];
				this.choices.record(mode, requests.get(i).id().workflow(),
						result != null && result.outcome() != ClaimOutcome.ACQUIRED);
			}
		}
		if (failure == null && !byScript.isEmpty()) {
			failure = byScript(requests, byScript, now, results);
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

	private SlotGroupedScript.@Nullable Replies read(List<ClaimRequest> requests) {
		List<SlotGroupedScript.Call> reads = new ArrayList<>(requests.size());
		for (ClaimRequest request : requests) {
			reads.add(new SlotGroupedScript.Call(this.access.keyBytes(request.id())));
		}
		return RedisScripts.READ_ALL.run(this.access.connectionFactory, List.of(), reads, this.access.batchTimeout,
				SlotGroupedScript.NOTHING_AFTERWARDS);
	}

	/**
	 * Answers the keys whose record the read found and decided; a record that needs a
	 * conditional write goes to the claim script.
	 * @return the positions of the keys the read found no record of, in order
	 */
	private static int[] answer(List<ClaimRequest> requests, SlotGroupedScript.Replies found, Instant at,
			@Nullable ClaimResult[] results, List<Integer> byScript) {
		int[] unread = new int[requests.size()];
		int count = 0;
		for (int i = 0; i < unread.length; i++) {
			if (found.replies[i] instanceof byte[] value) {
				results[i] = SingleClaim.answered(requests.get(i), value, at);
				if (results[i] == null) {
					byScript.add(i);
				}
			}
			else {
				unread[count++] = i;
			}
		}
		return Arrays.copyOf(unread, count);
	}

	/**
	 * Sends {@code SET NX GET} for the keys at {@code positions} and answers what it can in
	 * {@code results}, adding to {@code byScript} what needs the claim script.
	 * @return the replies (their failure, if any, not thrown yet), or {@code null} when
	 * the connection is not Lettuce's
	 */
	private SlotGroupedScript.@Nullable Replies claimNew(List<ClaimRequest> requests, int[] positions, Instant at,
			@Nullable ClaimResult[] results, List<Integer> byScript) {
		List<IdempotencyRecord> fresh = new ArrayList<>(positions.length);
		List<byte[]> ownerTokens = new ArrayList<>(positions.length);
		List<SlotGroupedScript.Call> calls = new ArrayList<>(positions.length);
		for (int i : positions) {
			ClaimRequest request = requests.get(i);
			IdempotencyRecord record = ClaimRules.claimed(null, request, at);
			byte[] ownerToken = RecordToken.of(request.owner());
			fresh.add(record);
			ownerTokens.add(ownerToken);
			calls.add(new SlotGroupedScript.Call(this.access.keyBytes(request.id()),
					CompactRecord.encode(record, ownerToken),
					RedisAccess.number(request.leaseTtl().toMillis() + request.retention().toMillis())));
		}
		SlotGroupedScript.Replies replies = RedisScripts.CLAIM_NEW_ALL.run(this.access.connectionFactory, List.of(),
				calls, this.access.batchTimeout, SlotGroupedScript.NOTHING_AFTERWARDS);
		if (replies == null) {
			return null;
		}
		for (int j = 0; j < positions.length; j++) {
			int i = positions[j];
			Object reply = replies.replies[j];
			ClaimRequest request = requests.get(i);
			try {
				if (reply == null) {
					// its call failed: the replies' failure
					continue;
				}
				if (reply instanceof Long) {
					SlotGroupedScript.Call call = calls.get(j);
					results[i] = ClaimResult.acquired(fresh.get(j), this.single.acquired(request, fresh.get(j),
							call.arguments()[0], call.key(), ownerTokens.get(j)));
				}
				else if (reply instanceof byte[] value) {
					results[i] = SingleClaim.answered(request, value, at);
					if (results[i] == null) {
						byScript.add(i);
					}
				}
				else {
					String error = RedisAccess.text(((List<?>) reply).get(0));
					if (!this.legacy.leavesClaimToScript(error)) {
						throw new RedisSystemException("Redis refused the claim of " + request.id() + ": " + error,
								null);
					}
					byScript.add(i);
				}
			}
			catch (RuntimeException ex) {
				replies.fail(ex);
			}
		}
		return replies;
	}

	/**
	 * Claims the requests at {@code positions} with {@code claim.lua}, answering in
	 * {@code results} those it claimed.
	 * @return the first failure of a call, or {@code null}
	 */
	private @Nullable RuntimeException byScript(List<ClaimRequest> requests, List<Integer> positions, long now,
			@Nullable ClaimResult[] results) {
		List<SlotGroupedScript.Call> calls = new ArrayList<>(positions.size());
		for (int i : positions) {
			ClaimRequest request = requests.get(i);
			calls.add(new SlotGroupedScript.Call(this.access.keyBytes(request.id()),
					SingleClaim.scriptArguments(request)));
		}
		SlotGroupedScript.Replies replies = RedisScripts.CLAIM_ALL.run(this.access.connectionFactory,
				List.of(String.valueOf(now)), calls, this.access.batchTimeout, SlotGroupedScript.NOTHING_AFTERWARDS);
		if (replies == null) {
			for (int i : positions) {
				results[i] = this.single.claim(requests.get(i));
			}
			return null;
		}
		for (int j = 0; j < positions.size(); j++) {
			Object reply = replies.replies[j];
			if (reply != null) {
				int i = positions.get(j);
				results[i] = this.single.claimed(requests.get(i), (List<?>) reply, now);
			}
		}
		return replies.failure();
	}

}
