package io.github.idempotency.store.redis;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import io.github.idempotency.store.ReactiveClaimHandle;

/**
 * A claim of the non-blocking store, held by its lease: each step is one script, fenced by
 * the owner, with the arguments its {@link ClaimState} gives, as a {@link RedisClaim}'s.
 */
final class ReactiveRedisClaim implements ReactiveClaimHandle {

	private final ReactiveRedisAccess access;

	final ClaimState state;

	ReactiveRedisClaim(ReactiveRedisAccess access, ClaimState state) {
		this.access = access;
		this.state = state;
	}

	/** Whether this claim was made by the store that reaches Redis through {@code access}. */
	boolean isOf(ReactiveRedisAccess access) {
		return this.access == access;
	}

	@Override
	public Mono<Boolean> complete(@Nullable String response) {
		return finish(null, response);
	}

	@Override
	public Mono<Boolean> fail(Throwable failure) {
		return finish(failure, null);
	}

	private Mono<Boolean> finish(@Nullable Throwable failure, @Nullable String response) {
		return Mono.defer(() -> this.access.run(RedisScripts.FINISH, this.state.key,
				this.state.finishCall(this.access.now(), failure, response)))
			.map(ClaimState::isOne);
	}

	@Override
	public Mono<Boolean> release(Throwable failure) {
		return Mono.defer(() -> this.access.run(RedisScripts.RELEASE, this.state.key,
				this.state.releaseArguments(this.access.now())))
			.map(ClaimState::isOne);
	}

	@Override
	public Mono<Boolean> renew() {
		return renew(null);
	}

	@Override
	public Mono<Boolean> saveRecoveryPoint(String recoveryPoint) {
		return renew(recoveryPoint);
	}

	private Mono<Boolean> renew(@Nullable String recoveryPoint) {
		return Mono.defer(() -> this.access.run(RedisScripts.RENEW, this.state.key,
				this.state.renewArguments(this.access.now(), recoveryPoint)))
			.map(ClaimState::isOne);
	}

}
