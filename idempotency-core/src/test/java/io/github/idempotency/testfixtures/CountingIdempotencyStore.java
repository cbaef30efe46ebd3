package io.github.idempotency.testfixtures;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

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
 * assert the cost of each path; it can also fail the next completions, failures or
 * releases the way a store that cannot be reached does, or lose their answers.
 */
public final class CountingIdempotencyStore implements IdempotencyStore {

	private final IdempotencyStore delegate;

	private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

	private final Map<String, Faults> faults = new ConcurrentHashMap<>();

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
	 * Makes the next {@code count} calls of a finishing step ({@code complete}, {@code fail}
	 * or {@code release}) throw, before they reach the wrapped store.
	 * @param operation the step
	 * @param count how many ({@link Integer#MAX_VALUE}: all of them; 0: none from now on)
	 * @param failure what they throw
	 */
	public void failCalls(String operation, int count, RuntimeException failure) {
		Faults faults = faults(operation);
		faults.failure = failure;
		faults.toFail.set(count);
	}

	/**
	 * Makes the next {@code count} calls of a finishing step throw a
	 * {@link DataAccessResourceFailureException}, as when the connection is lost.
	 * @param operation the step
	 * @param count how many ({@link Integer#MAX_VALUE}: all of them; 0: none from now on)
	 */
	public void failCalls(String operation, int count) {
		failCalls(operation, count, new DataAccessResourceFailureException("connection reset"));
	}

	/**
	 * Makes the next {@code count} calls of a finishing step reach the wrapped store and
	 * then throw a {@link QueryTimeoutException}, as when the answer is lost on the way back.
	 * @param operation the step
	 * @param count how many
	 */
	public void loseAnswers(String operation, int count) {
		faults(operation).answersToLose.set(count);
	}

	private Faults faults(String operation) {
		return this.faults.computeIfAbsent(operation, (name) -> new Faults());
	}

	/** Counts the call, then runs it with the faults asked for it. */
	private boolean call(String operation, Supplier<Boolean> call) {
		count(operation);
		Faults faults = faults(operation);
		if (take(faults.toFail)) {
			throw faults.failure;
		}
		boolean answer = call.get();
		if (take(faults.answersToLose)) {
			throw new QueryTimeoutException("command timed out");
		}
		return answer;
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
			return call("complete", () -> this.delegate.complete(response));
		}

		@Override
		public boolean fail(Throwable failure) {
			return call("fail", () -> this.delegate.fail(failure));
		}

		@Override
		public boolean release(Throwable failure) {
			return call("release", () -> this.delegate.release(failure));
		}

		@Override
		public boolean abandon() {
			return call("release", this.delegate::abandon);
		}

		@Override
		public boolean joinsTransaction() {
			return this.delegate.joinsTransaction();
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

	private static final class Faults {

		private final AtomicInteger toFail = new AtomicInteger();

		private volatile RuntimeException failure = new DataAccessResourceFailureException("connection reset");

		private final AtomicInteger answersToLose = new AtomicInteger();

	}

}
