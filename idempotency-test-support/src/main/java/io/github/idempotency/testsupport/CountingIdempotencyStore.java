package io.github.idempotency.testsupport;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.QueryTimeoutException;

/**
 * Wraps a real store and counts the calls made to it, by operation name, so tests can
 * assert the cost of each path; it can also fail the next completions the way a store
 * that cannot be reached does.
 */
public final class CountingIdempotencyStore implements IdempotencyStore {

	private final IdempotencyStore delegate;

	private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

	private final AtomicInteger completionsToFail = new AtomicInteger();

	private volatile RuntimeException completionFailure = new DataAccessResourceFailureException("connection reset");

	private final AtomicInteger answersToLose = new AtomicInteger();

	public CountingIdempotencyStore(IdempotencyStore delegate) {
		this.delegate = delegate;
	}

	public int calls(String operation) {
		AtomicInteger count = this.calls.get(operation);
		return (count != null) ? count.get() : 0;
	}

	public int totalCalls() {
		return this.calls.values().stream().mapToInt(AtomicInteger::get).sum();
	}

	public void reset() {
		this.calls.clear();
	}

	/**
	 * Makes the next {@code count} completions throw, before they reach the wrapped store.
	 * @param count how many ({@link Integer#MAX_VALUE}: all of them)
	 * @param failure what they throw
	 */
	public void failCompletions(int count, RuntimeException failure) {
		this.completionFailure = failure;
		this.completionsToFail.set(count);
	}

	/**
	 * Makes the next {@code count} completions throw a
	 * {@link DataAccessResourceFailureException}, as when the connection is lost.
	 * @param count how many ({@link Integer#MAX_VALUE}: all of them)
	 */
	public void failCompletions(int count) {
		failCompletions(count, new DataAccessResourceFailureException("connection reset"));
	}

	/**
	 * Makes the next {@code count} completions reach the wrapped store and then throw a
	 * {@link QueryTimeoutException}, as when the answer is lost on the way back.
	 * @param count how many
	 */
	public void loseCompletionAnswers(int count) {
		this.answersToLose.set(count);
	}

	private static boolean take(AtomicInteger left) {
		return left.getAndUpdate((value) -> Math.max(value - 1, 0)) > 0;
	}

	private void count(String operation) {
		this.calls.computeIfAbsent(operation, (name) -> new AtomicInteger()).incrementAndGet();
	}

	@Override
	public ClaimResult claim(ClaimRequest request) {
		count("claim");
		ClaimResult result = this.delegate.claim(request);
		return (result.handle() != null) ? ClaimResult.acquired(result.record(), new CountingClaim(result.handle()))
				: result;
	}

	@Override
	public Optional<IdempotencyRecord> find(RecordId id) {
		count("find");
		return this.delegate.find(id);
	}

	@Override
	public boolean delete(RecordId id) {
		count("delete");
		return this.delegate.delete(id);
	}

	@Override
	public String backend() {
		return this.delegate.backend();
	}

	private final class CountingClaim implements ClaimHandle {

		private final ClaimHandle delegate;

		CountingClaim(ClaimHandle delegate) {
			this.delegate = delegate;
		}

		@Override
		public boolean complete(@Nullable String response) {
			count("complete");
			if (take(CountingIdempotencyStore.this.completionsToFail)) {
				throw CountingIdempotencyStore.this.completionFailure;
			}
			boolean completed = this.delegate.complete(response);
			if (take(CountingIdempotencyStore.this.answersToLose)) {
				throw new QueryTimeoutException("command timed out");
			}
			return completed;
		}

		@Override
		public boolean fail(Throwable failure) {
			count("fail");
			return this.delegate.fail(failure);
		}

		@Override
		public boolean release(Throwable failure) {
			count("release");
			return this.delegate.release(failure);
		}

		@Override
		public boolean renew() {
			count("renew");
			return this.delegate.renew();
		}

		@Override
		public boolean saveRecoveryPoint(String recoveryPoint) {
			count("saveRecoveryPoint");
			return this.delegate.saveRecoveryPoint(recoveryPoint);
		}

	}

}
