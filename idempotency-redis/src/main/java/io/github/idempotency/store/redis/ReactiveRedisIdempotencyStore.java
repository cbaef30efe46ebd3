package io.github.idempotency.store.redis;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.ReactiveClaimHandle;
import io.github.idempotency.store.ReactiveClaimResult;
import io.github.idempotency.store.ReactiveIdempotencyStore;
import io.github.idempotency.store.ReadFirst;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import org.springframework.data.redis.connection.ReactiveRedisConnection;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.SetCondition;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.types.Expiration;
import org.springframework.util.Assert;

/**
 * The {@link RedisIdempotencyStore redis store} through Lettuce's reactive API: the same
 * record in the same key, written by the same command and the same Lua scripts, with the
 * same answers, each step a {@code Mono} that holds no thread while Redis answers. Both
 * stores can serve the same keys at once (a claim of one completed by the other).
 * <p>
 * A claim is {@code SET key record NX GET PX lease+retention} (Redis 7.0 or later; an older
 * server's refusal is an {@code IllegalStateException}); only a record whose lease or
 * retention ran out, or a record of layout 0, goes on to the claim script. A batch
 * ({@link #claimAll}, {@link #completeAll}) costs one script call per node (per hash slot
 * on Redis Cluster), all sent before any answer arrives; it reads first as
 * {@link #setReadFirst} says. Time comes from the given {@link Clock}, as for the blocking
 * store. It does not wait for replicas ({@code WAIT}, which Spring Data Redis's reactive
 * API does not send): an application that sets a replica wait uses the blocking store.
 */
public final class ReactiveRedisIdempotencyStore implements ReactiveIdempotencyStore {

	private static final org.apache.commons.logging.Log logger = org.apache.commons.logging.LogFactory
		.getLog(ReactiveRedisIdempotencyStore.class);

	private final ReactiveRedisAccess access;

	private final ReactiveBatchClaim batch;

	/**
	 * Creates a store on the application's connection factory.
	 * @param connectionFactory the Redis connections, Lettuce's
	 * @param keyPrefix the first part of every key, such as
	 * {@value RedisIdempotencyStore#DEFAULT_KEY_PREFIX}: the blocking store's, to share its
	 * records
	 * @param clock the time leases and retention are measured on
	 */
	public ReactiveRedisIdempotencyStore(ReactiveRedisConnectionFactory connectionFactory, String keyPrefix,
			Clock clock) {
		Assert.isInstanceOf(LettuceConnectionFactory.class, connectionFactory,
				"The reactive redis store runs on Lettuce's connection factory");
		RedisAccess.checkKeyPrefix(keyPrefix);
		Assert.notNull(clock, "'clock' must not be null");
		this.access = new ReactiveRedisAccess(connectionFactory, keyPrefix, clock);
		this.batch = new ReactiveBatchClaim(this.access);
		// the scripts are read from the class path once, here rather than in a step on an event loop
		Assert.state(RedisScripts.CLAIM != null, "The redis store's scripts are missing");
		connect(connectionFactory);
	}

	/**
	 * Opens the factory's shared connection now, on the thread that creates the store:
	 * Lettuce connects it, waiting, the first time a connection is asked for, which must
	 * not be a claim on an event loop. A server that does not answer yet leaves that to the
	 * first step.
	 */
	private static void connect(ReactiveRedisConnectionFactory connectionFactory) {
		try {
			// the shared connection, which the factory closes
			connectionFactory.getReactiveConnection();
		}
		catch (RuntimeException ex) {
			logger.debug("Redis did not answer yet; the first step connects", ex);
		}
	}

	/**
	 * Whether a batch reads its keys before it claims them, as
	 * {@link RedisIdempotencyStore#setReadFirst} says ({@link ReadFirst#ADAPTIVE} by default).
	 * @param readFirst never, per workflow by the share of duplicates, or always
	 */
	public void setReadFirst(ReadFirst readFirst) {
		Assert.notNull(readFirst, "'readFirst' must not be null");
		this.batch.setReadFirst(readFirst);
	}

	@Override
	public Mono<ReactiveClaimResult> claim(ClaimRequest request) {
		return Mono.defer(() -> {
			long now = this.access.now();
			ClaimState fresh = ClaimState.fresh(request, this.access.keyBytes(request.id()), now);
			ByteBuffer value = ByteBuffer.wrap(Objects.requireNonNull(fresh.written()));
			return this.access
				.withConnection((connection) -> connection.stringCommands()
					.setGet(ByteBuffer.wrap(fresh.key), value, SetCondition.ifAbsent(),
							Expiration.milliseconds(fresh.timeToLive())))
				.map((found) -> {
					ClaimAnswer answered = ClaimAnswer.found(request, ReactiveRedisAccess.bytes(found),
							Instant.ofEpochMilli(now));
					return (answered != null) ? Mono.just(result(this.access, answered)) : byScript(request, now);
				})
				.defaultIfEmpty(Mono.fromSupplier(() -> result(this.access, ClaimAnswer.acquired(fresh))))
				.onErrorResume(LegacyFallbacks::isLayout0, (ex) -> Mono.just(byScript(request, now)))
				.onErrorMap(LegacyFallbacks::refusesSetNxGet, ReactiveRedisIdempotencyStore::refused)
				.flatMap((result) -> result);
		});
	}

	/** A claim by {@code claim.lua} alone. */
	private Mono<ReactiveClaimResult> byScript(ClaimRequest request, long now) {
		byte[] key = this.access.keyBytes(request.id());
		byte[][] own = ClaimAnswer.scriptArguments(request);
		byte[][] arguments = new byte[own.length + 1][];
		arguments[0] = RedisAccess.number(now);
		System.arraycopy(own, 0, arguments, 1, own.length);
		return this.access.run(RedisScripts.CLAIM, key, arguments)
			.map((reply) -> result(this.access, ClaimAnswer.scripted(request, (List<?>) reply, now, key)));
	}

	/**
	 * Claims the records in one script call per node (per hash slot on Redis Cluster) and
	 * step, as {@link RedisIdempotencyStore#claimAll} does.
	 */
	@Override
	public Mono<List<ReactiveClaimResult>> claimAll(List<ClaimRequest> requests) {
		if (requests.size() <= 1) {
			return requests.isEmpty() ? Mono.fromSupplier(List::of) : claim(requests.get(0)).map(List::of);
		}
		return this.batch.claimAll(requests);
	}

	/**
	 * Completes the claims with one script call per node (per hash slot on Redis Cluster),
	 * each record fenced by its owner. Handles of another store go the default way.
	 */
	@Override
	public Mono<List<Boolean>> completeAll(List<ReactiveClaimHandle> handles, List<@Nullable String> responses) {
		Assert.isTrue(handles.size() == responses.size(), "One response per handle is required");
		if (handles.size() <= 1 || !handles.stream().allMatch(
				(handle) -> handle instanceof ReactiveRedisClaim claim && claim.isOf(this.access))) {
			return ReactiveIdempotencyStore.super.completeAll(handles, responses);
		}
		return Mono.defer(() -> {
			long now = this.access.now();
			List<SlotGroupedScript.Call> calls = new ArrayList<>(handles.size());
			for (int i = 0; i < handles.size(); i++) {
				ClaimState claim = ((ReactiveRedisClaim) handles.get(i)).state;
				calls.add(new SlotGroupedScript.Call(claim.key,
						claim.finishArguments(now, RecordStatus.COMPLETED, responses.get(i), null, null)));
			}
			return this.access.withConnection((connection) -> this.access.runAll(connection,
					RedisScripts.FINISH_ALL, List.of(String.valueOf(now)), calls))
				.flatMap((replies) -> {
					RuntimeException failure = replies.failure();
					if (failure != null) {
						return Mono.error(failure);
					}
					List<Boolean> completed = new ArrayList<>(handles.size());
					for (Object reply : replies.replies) {
						completed.add(ClaimState.isOne(reply));
					}
					return Mono.just(completed);
				});
		});
	}

	@Override
	public Mono<IdempotencyRecord> find(RecordId id) {
		return Mono.defer(() -> {
			ByteBuffer key = ByteBuffer.wrap(this.access.keyBytes(id));
			return this.access
				.withConnection((connection) -> connection.stringCommands()
					.get(key)
					.map((value) -> CompactRecord.decode(id, ReactiveRedisAccess.bytes(value)))
					.onErrorResume(LegacyFallbacks::isLayout0, (ex) -> layout0(connection, id, key)))
				.filter((record) -> !record.isExpired(this.access.clock().instant()));
		});
	}

	/** A record of layout 0, read as it is (its hash's fields). */
	private static Mono<IdempotencyRecord> layout0(
			ReactiveRedisConnection connection, RecordId id, ByteBuffer key) {
		return connection.hashCommands().hGetAll(key.duplicate()).collectList().flatMap((entries) -> {
			Map<String, String> fields = new HashMap<>();
			entries.forEach((entry) -> fields.put(StandardCharsets.UTF_8.decode(entry.getKey()).toString(),
					StandardCharsets.UTF_8.decode(entry.getValue()).toString()));
			return Mono.justOrEmpty(LegacyFallbacks.layout0(id, fields));
		});
	}

	@Override
	public Mono<Boolean> delete(RecordId id) {
		return Mono.defer(() -> {
			ByteBuffer key = ByteBuffer.wrap(this.access.keyBytes(id));
			return this.access.withConnection((connection) -> connection.keyCommands().del(key))
				.map((removed) -> removed > 0);
		});
	}

	@Override
	public String backend() {
		return "redis";
	}

	/** The result of an answer, an acquired claim with this store's handle. */
	static ReactiveClaimResult result(ReactiveRedisAccess access, ClaimAnswer answer) {
		ClaimState acquired = answer.acquired();
		return (acquired != null) ? ReactiveClaimResult.acquired(answer.record(), new ReactiveRedisClaim(access, acquired))
				: ReactiveClaimResult.of(answer.outcome(), answer.record());
	}

	/**
	 * Whether an error a batch's {@code SET NX GET} answered for a key leaves it to the claim
	 * script: a record of layout 0. A server before 7.0 is refused.
	 */
	static boolean leavesClaimToScript(String error) {
		if (LegacyFallbacks.refusesSetNxGet(error)) {
			throw refused(null);
		}
		return LegacyFallbacks.isLayout0(error);
	}

	private static IllegalStateException refused(@Nullable Throwable cause) {
		return new IllegalStateException(
				"The reactive redis store needs Redis 7.0 or later, which takes SET with both NX and GET", cause);
	}

}
