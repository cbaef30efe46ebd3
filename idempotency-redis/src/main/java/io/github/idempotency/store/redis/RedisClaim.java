package io.github.idempotency.store.redis;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.RecordStatus;

/**
 * A claim held by its lease: each step is one script, fenced by the owner, with the
 * arguments its {@link ClaimState} gives.
 */
final class RedisClaim implements ClaimHandle {

	private final Completions completions;

	final ClaimState state;

	RedisClaim(Completions completions, ClaimState state) {
		this.completions = completions;
		this.state = state;
	}

	/** Whether this claim was made by the store that {@code completions} completes for. */
	boolean isOf(Completions completions) {
		return this.completions == completions;
	}

	@Override
	public boolean complete(@Nullable String response) {
		return this.completions.finish(this.state, RecordStatus.COMPLETED, response, null, null);
	}

	@Override
	public boolean fail(Throwable failure) {
		return this.completions.finish(this.state, RecordStatus.FAILED, null, IdempotencyRecord.errorTypeOf(failure),
				IdempotencyRecord.errorMessageOf(failure));
	}

	@Override
	public boolean release(Throwable failure) {
		RedisAccess access = this.completions.access();
		return ClaimState.isOne(access.run(RedisScripts.RELEASE, access.key(this.state.request().id()),
				(Object[]) this.state.releaseArguments(access.now())));
	}

	@Override
	public boolean renew() {
		return renew(null);
	}

	@Override
	public boolean saveRecoveryPoint(String recoveryPoint) {
		return renew(recoveryPoint);
	}

	private boolean renew(@Nullable String recoveryPoint) {
		RedisAccess access = this.completions.access();
		return ClaimState.isOne(access.run(RedisScripts.RENEW, access.key(this.state.request().id()),
				(Object[]) this.state.renewArguments(access.now(), recoveryPoint)));
	}

}
