package io.github.idempotency.store.redis;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.core.RedisOperations;
import org.springframework.data.redis.core.SessionCallback;

/**
 * Completes and fails the store's claims with {@code finish.lua}, fenced by owner: it
 * writes the finished record the claim built when the record still is the value the claim
 * wrote (one {@code GET}, one compare, one {@code SET}, nothing decoded), and otherwise
 * (renewed, a recovery point saved, taken over, of layout 0) reads the record and finishes
 * it only when it is still the claim's. One key is one call; a batch is one call per
 * cluster hash slot (one on a single node), all sent before any answer is awaited. With
 * a {@link ReplicaWait}, {@code WAIT} follows on the same connection.
 */
final class Completions {

	private final RedisAccess access;

	private final ReplicaWait replicaWait;

	Completions(RedisAccess access, ReplicaWait replicaWait) {
		this.access = access;
		this.replicaWait = replicaWait;
	}

	RedisAccess access() {
		return this.access;
	}

	/** Completes or fails one claim: one call of {@code finish.lua}, then the wait if any. */
	boolean finish(ClaimState claim, RecordStatus status, @Nullable String response, @Nullable String errorType,
			@Nullable String errorMessage) {
		RecordId id = claim.request().id();
		List<String> keys = List.of(this.access.key(id));
		long now = this.access.now();
		List<Object> args = new ArrayList<>(5);
		args.add(String.valueOf(now));
		args.addAll(Arrays.asList(claim.finishArguments(now, status, response, errorType, errorMessage)));
		if (!this.replicaWait.isOn()) {
			return ClaimState.isFinished(this.access.run(RedisScripts.FINISH, keys.get(0), args.toArray()));
		}
		Boolean finished = this.access.redis.execute(new SessionCallback<>() {
			@Override
			@SuppressWarnings("unchecked")
			public Boolean execute(RedisOperations operations) throws DataAccessException {
				// the session binds one connection: WAIT counts the writes made on it
				boolean owned = ClaimState.isFinished((List<?>) operations.execute(RedisScripts.FINISH, RedisAccess.ARGUMENTS,
						RedisAccess.RESULT, keys, args.toArray()));
				if (owned) {
					Completions.this.replicaWait.await(operations, id.toString());
				}
				return owned;
			}
		});
		return Boolean.TRUE.equals(finished);
	}

	/**
	 * Completes claims of this store in one call of {@code finish.lua} per cluster hash slot.
	 * @param handles claims of this store
	 * @param responses the response of each
	 * @return whether each was completed, or {@code null} when the connection is not
	 * Lettuce's (see {@link LegacyFallbacks}): the caller then goes key by key
	 */
	@Nullable List<Boolean> completeAll(List<ClaimHandle> handles, List<@Nullable String> responses) {
		long now = this.access.now();
		List<SlotGroupedScript.Call> calls = new ArrayList<>(handles.size());
		for (int i = 0; i < handles.size(); i++) {
			ClaimState claim = ((RedisClaim) handles.get(i)).state;
			calls.add(new SlotGroupedScript.Call(claim.key,
					claim.finishArguments(now, RecordStatus.COMPLETED, responses.get(i), null, null)));
		}
		AtomicReference<@Nullable Object> acknowledged = new AtomicReference<>();
		SlotGroupedScript.Replies replies = RedisScripts.FINISH_ALL.run(this.access.connectionFactory,
				List.of(String.valueOf(now)), calls, this.access.batchTimeout, (connection) -> {
					if (this.replicaWait.isOn()) {
						acknowledged.set(this.replicaWait.await(connection));
					}
				});
		if (replies == null) {
			return null;
		}
		List<Boolean> completed = new ArrayList<>(handles.size());
		for (Object reply : replies.replies) {
			completed.add(ClaimState.isOne(reply));
		}
		if (replies.failure() != null) {
			throw replies.failure();
		}
		if (this.replicaWait.isOn()) {
			this.replicaWait.report(acknowledged.get(), handles.size() + " records of a batch");
		}
		return completed;
	}

}
