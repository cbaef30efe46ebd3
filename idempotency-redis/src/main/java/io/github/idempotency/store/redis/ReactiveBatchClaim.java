package io.github.idempotency.store.redis;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ReactiveClaimResult;
import io.github.idempotency.store.ReadFirst;
import org.springframework.data.redis.connection.ReactiveRedisConnection;

/**
 * The claim of a batch for the non-blocking store: the steps of {@link BatchClaim} with the
 * same calls and answers ({@link BatchSteps}), each step one script call per cluster hash
 * slot (one on a single node) on one connection, all calls of a step sent before any
 * answer arrives. The read of a workflow that reads first is one {@code MGET} (split by
 * slot by Lettuce on Redis Cluster), which is all {@code read.lua} does.
 */
final class ReactiveBatchClaim {

	private final ReactiveRedisAccess access;

	private final ReadFirst.Choices choices = new ReadFirst.Choices();

	private volatile ReadFirst readFirst = ReadFirst.ADAPTIVE;

	ReactiveBatchClaim(ReactiveRedisAccess access) {
		this.access = access;
	}

	void setReadFirst(ReadFirst readFirst) {
		this.readFirst = readFirst;
	}

	/**
	 * Claims two or more keys; when a call fails, the claims the others acquired are
	 * released before its failure is signalled.
	 * @param requests the claims
	 * @return their results in order
	 */
	Mono<List<ReactiveClaimResult>> claimAll(List<ClaimRequest> requests) {
		return Mono.defer(() -> {
			BatchSteps steps = new BatchSteps(requests, (request) -> this.access.keyBytes(request.id()),
					this.access.now());
			ReadFirst mode = this.readFirst;
			return this.access.withConnection((connection) -> read(connection, steps, mode)
				.then(Mono.defer(() -> claimNew(connection, steps)))
				.flatMap((failure) -> {
					steps.record(this.choices, mode);
					if (failure.isPresent() || steps.byScript().isEmpty()) {
						return Mono.just(failure);
					}
					return this.access.runAll(connection, RedisScripts.CLAIM_ALL, steps.scriptLeading(),
							steps.scriptCalls()).map((replies) -> {
								steps.answerScript(replies);
								return Optional.ofNullable(replies.failure());
							});
				}))
				.flatMap((failure) -> results(steps, failure.orElse(null)));
		});
	}

	/** The read first, when the batch's workflow reads first: nothing claimed yet. */
	private Mono<Void> read(ReactiveRedisConnection connection, BatchSteps steps, ReadFirst mode) {
		if (!steps.readsFirst(this.choices, mode)) {
			return Mono.empty();
		}
		List<ByteBuffer> keys = new ArrayList<>();
		for (SlotGroupedScript.Call call : steps.readCalls()) {
			keys.add(ByteBuffer.wrap(call.key()));
		}
		return connection.stringCommands().mGet(keys).doOnNext((values) -> {
			@Nullable Object[] found = new Object[values.size()];
			for (int i = 0; i < found.length; i++) {
				ByteBuffer value = values.get(i);
				// an absent key (or one of layout 0, no string) answers nothing: claimed next
				found[i] = (value != null && value.hasRemaining()) ? ReactiveRedisAccess.bytes(value) : null;
			}
			steps.answerRead(found);
		}).then();
	}

	/** {@code claim_new.lua} for the keys not answered yet: its failure, if any. */
	private Mono<Optional<RuntimeException>> claimNew(ReactiveRedisConnection connection, BatchSteps steps) {
		List<SlotGroupedScript.Call> calls = steps.claimNewCalls();
		if (calls.isEmpty()) {
			return Mono.just(Optional.empty());
		}
		return this.access.runAll(connection, RedisScripts.CLAIM_NEW_ALL, List.of(), calls).map((replies) -> {
			steps.answerClaimNew(replies, ReactiveRedisIdempotencyStore::leavesClaimToScript);
			return Optional.ofNullable(replies.failure());
		});
	}

	/**
	 * The results, or the failure once the claims acquired are released.
	 */
	private Mono<List<ReactiveClaimResult>> results(BatchSteps steps, @Nullable RuntimeException failure) {
		@Nullable ClaimAnswer[] answers = steps.answers();
		@Nullable ReactiveClaimResult[] results = new ReactiveClaimResult[answers.length];
		for (int i = 0; i < answers.length; i++) {
			ClaimAnswer answer = answers[i];
			results[i] = (answer != null) ? ReactiveRedisIdempotencyStore.result(this.access, answer) : null;
		}
		if (failure == null) {
			return Mono.just(Arrays.asList(results));
		}
		List<ReactiveClaimResult> acquired = new ArrayList<>();
		for (ReactiveClaimResult result : results) {
			if (result != null && result.handle() != null) {
				acquired.add(result);
			}
		}
		return Flux.fromIterable(acquired)
			.concatMap((result) -> result.acquiredHandle().release(failure).onErrorResume((releaseFailure) -> {
				failure.addSuppressed(releaseFailure);
				return Mono.empty();
			}))
			.then(Mono.error(failure));
	}

}
