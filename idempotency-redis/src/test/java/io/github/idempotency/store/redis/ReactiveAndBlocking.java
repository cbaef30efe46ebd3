package io.github.idempotency.store.redis;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

import reactor.core.publisher.Mono;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.ReactiveClaimResult;
import io.github.idempotency.store.ReadFirst;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.test.MutableClock;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the reactive redis store shares with the blocking one, on one server (single node or
 * cluster): the keys, the records, the answers.
 */
final class ReactiveAndBlocking {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration RETENTION = Duration.ofHours(1);

	private static final String PREFIX = "idempotency-test";

	private ReactiveAndBlocking() {
	}

	/** A claim of either store is seen, answered and finished by the other. */
	static void assertBothServeTheSameKeys(LettuceConnectionFactory factory, MutableClock clock, String workflow) {
		RedisIdempotencyStore blocking = new RedisIdempotencyStore(factory, PREFIX, clock);
		ReactiveRedisIdempotencyStore reactive = new ReactiveRedisIdempotencyStore(factory, PREFIX, clock);

		ReactiveClaimResult claimed = block(reactive.claim(request(workflow, "by-reactive", "owner-1")));
		assertThat(claimed.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		ClaimResult running = blocking.claim(request(workflow, "by-reactive", "owner-2"));
		assertThat(running.outcome()).as("the blocking store sees the reactive claim").isEqualTo(ClaimOutcome.IN_PROGRESS);
		assertThat(running.record().owner()).isEqualTo("owner-1");
		assertThat(block(claimed.acquiredHandle().complete("{\"done\":1}"))).isTrue();
		IdempotencyRecord done = blocking.find(new RecordId(workflow, "by-reactive")).orElseThrow();
		assertThat(done.status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(done.response()).isEqualTo("{\"done\":1}");

		ClaimHandle handle = blocking.claim(request(workflow, "by-blocking", "owner-3")).acquiredHandle();
		assertThat(handle.saveRecoveryPoint("half")).isTrue();
		ReactiveClaimResult seen = block(reactive.claim(request(workflow, "by-blocking", "owner-4")));
		assertThat(seen.outcome()).as("the reactive store sees the blocking claim").isEqualTo(ClaimOutcome.IN_PROGRESS);
		assertThat(seen.record().recoveryPoint()).isEqualTo("half");
		clock.advance(LEASE);
		ReactiveClaimResult takeover = block(reactive.claim(request(workflow, "by-blocking", "owner-4")));
		assertThat(takeover.outcome()).as("a takeover of an expired blocking claim").isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(takeover.record().attempt()).isEqualTo(2);
		assertThat(takeover.record().recoveryPoint()).isEqualTo("half");
		assertThat(handle.complete("late")).as("the blocking claim taken over").isFalse();
		assertThat(block(takeover.acquiredHandle().fail(new IllegalStateException("out of stock")))).isTrue();
		ClaimResult failed = blocking.claim(request(workflow, "by-blocking", "owner-5"));
		assertThat(failed.outcome()).isEqualTo(ClaimOutcome.FAILED);
		assertThat(failed.record().errorMessage()).isEqualTo("out of stock");

		List<ClaimResult> batch = blocking.claimAll(
				List.of(request(workflow, "batch-1", "owner-6"), request(workflow, "batch-2", "owner-6")));
		List<ReactiveClaimResult> again = block(reactive.claimAll(
				List.of(request(workflow, "batch-1", "owner-7"), request(workflow, "batch-2", "owner-7"))));
		assertThat(again).extracting(ReactiveClaimResult::outcome).containsOnly(ClaimOutcome.IN_PROGRESS);
		assertThat(blocking.completeAll(batch.stream().map(ClaimResult::acquiredHandle).toList(),
				java.util.Arrays.asList("1", null)))
			.containsOnly(true);
		assertThat(block(reactive.claimAll(
				List.of(request(workflow, "batch-1", "owner-7"), request(workflow, "batch-2", "owner-7")))))
			.extracting(ReactiveClaimResult::outcome)
			.containsOnly(ClaimOutcome.DUPLICATE);
	}

	/**
	 * A batch that reads first answers its duplicates from the read and claims its new keys,
	 * in one order.
	 */
	static void assertReadFirstBatch(LettuceConnectionFactory factory, MutableClock clock, String workflow) {
		ReactiveRedisIdempotencyStore reactive = new ReactiveRedisIdempotencyStore(factory, PREFIX, clock);
		reactive.setReadFirst(ReadFirst.ALWAYS);
		List<ReactiveClaimResult> first = block(
				reactive.claimAll(List.of(request(workflow, "a", "owner-1"), request(workflow, "b", "owner-1"))));
		assertThat(first).extracting(ReactiveClaimResult::outcome).containsOnly(ClaimOutcome.ACQUIRED);
		assertThat(block(reactive.completeAll(first.stream().map(ReactiveClaimResult::acquiredHandle).toList(),
				List.of("A", "B"))))
			.containsExactly(true, true);
		List<ReactiveClaimResult> mixed = block(reactive.claimAll(List.of(request(workflow, "c", "owner-2"),
				request(workflow, "a", "owner-2"), request(workflow, "d", "owner-2"), request(workflow, "b", "owner-2"),
				request(workflow, "c", "owner-2"))));
		assertThat(mixed).extracting(ReactiveClaimResult::outcome)
			.containsExactly(ClaimOutcome.ACQUIRED, ClaimOutcome.DUPLICATE, ClaimOutcome.ACQUIRED,
					ClaimOutcome.DUPLICATE, ClaimOutcome.IN_PROGRESS);
		assertThat(mixed.get(1).record().response()).isEqualTo("A");
		assertThat(mixed.get(3).record().response()).isEqualTo("B");
	}

	/** A record of layout 0 (a hash) is read, answered and taken over. */
	static void assertLayout0(LettuceConnectionFactory factory, MutableClock clock, String workflow) {
		StringRedisTemplate redis = new StringRedisTemplate(factory);
		redis.afterPropertiesSet();
		Layout0 layout0 = new Layout0(redis);
		ReactiveRedisIdempotencyStore reactive = new ReactiveRedisIdempotencyStore(factory, PREFIX, clock);
		RecordId done = new RecordId(workflow, "old-done");
		String doneKey = RedisAccess.key(PREFIX, done);
		long now = clock.millis();
		assertThat(layout0.claim(doneKey, now, "old-owner", "", LEASE, RETENTION)).isEqualTo("ACQUIRED");
		assertThat(layout0.finish(doneKey, now, "old-owner", RETENTION, "COMPLETED", "{\"old\":1}")).isTrue();
		IdempotencyRecord found = block(reactive.find(done));
		assertThat(found.status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(found.response()).isEqualTo("{\"old\":1}");
		ReactiveClaimResult duplicate = block(reactive.claim(request(workflow, "old-done", "new-owner")));
		assertThat(duplicate.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
		assertThat(duplicate.record().response()).isEqualTo("{\"old\":1}");

		String crashedKey = RedisAccess.key(PREFIX, new RecordId(workflow, "old-crashed"));
		layout0.claim(crashedKey, now, "old-owner", "", LEASE, RETENTION);
		clock.advance(LEASE);
		List<ReactiveClaimResult> batch = block(reactive.claimAll(
				List.of(request(workflow, "old-crashed", "new-owner"), request(workflow, "old-done", "new-owner"))));
		assertThat(batch).extracting(ReactiveClaimResult::outcome)
			.containsExactly(ClaimOutcome.ACQUIRED, ClaimOutcome.DUPLICATE);
		assertThat(batch.get(0).record().attempt()).isEqualTo(2);
		assertThat(block(batch.get(0).acquiredHandle().complete("new"))).isTrue();
	}

	/**
	 * A server that lost the scripts ({@code SCRIPT FLUSH}, a restart, a failover) gets them
	 * again: {@code EVAL} after {@code NOSCRIPT}, for one key and for a batch.
	 */
	static void assertScriptsLoadedAgain(LettuceConnectionFactory factory, MutableClock clock, String workflow) {
		ReactiveRedisIdempotencyStore reactive = new ReactiveRedisIdempotencyStore(factory, PREFIX, clock);
		List<ReactiveClaimResult> claimed = block(
				reactive.claimAll(List.of(request(workflow, "x", "owner-1"), request(workflow, "y", "owner-1"))));
		flushScripts(factory);
		assertThat(block(claimed.get(0).acquiredHandle().renew())).isTrue();
		flushScripts(factory);
		assertThat(block(reactive.completeAll(claimed.stream().map(ReactiveClaimResult::acquiredHandle).toList(),
				List.of("X", "Y"))))
			.containsExactly(true, true);
	}

	/** {@code SCRIPT FLUSH}, on every master of a cluster (Lettuce's cluster API sends it to all). */
	private static void flushScripts(LettuceConnectionFactory factory) {
		try (var connection = factory.getConnection()) {
			connection.scriptingCommands().scriptFlush();
		}
	}

	private static ClaimRequest request(String workflow, String key, String owner) {
		return new ClaimRequest(new RecordId(workflow, key), owner, null, LEASE, RETENTION);
	}

	private static <T> T block(Mono<T> step) {
		return Objects.requireNonNull(step.block(), "the step answered nothing");
	}

}
