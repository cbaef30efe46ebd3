package io.github.idempotency.autoconfigure.web;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Schedulers;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;

/**
 * Wraps a store and records every call made on a thread Reactor sees as non-blocking (an
 * event loop of Reactor Netty, a {@code parallel} worker): a store call there blocks the
 * loop. The call still runs, so that the test sees the whole answer, and then fails on
 * {@link #violations()}.
 */
final class NonBlockingThreadCheck implements IdempotencyStore {

	private final IdempotencyStore delegate;

	private final List<String> violations = new CopyOnWriteArrayList<>();

	private final java.util.concurrent.atomic.AtomicInteger claims = new java.util.concurrent.atomic.AtomicInteger();

	NonBlockingThreadCheck(IdempotencyStore delegate) {
		this.delegate = delegate;
	}

	/**
	 * The store calls made on a non-blocking thread.
	 * @return each as {@code operation on thread}
	 */
	List<String> violations() {
		return List.copyOf(this.violations);
	}

	/** How many claims were made. */
	int claims() {
		return this.claims.get();
	}

	void clear() {
		this.violations.clear();
	}

	private void check(String operation) {
		if (Schedulers.isInNonBlockingThread()) {
			this.violations.add(operation + " on " + Thread.currentThread().getName());
		}
	}

	@Override
	public ClaimResult claim(ClaimRequest request) {
		check("claim");
		this.claims.incrementAndGet();
		ClaimResult result = this.delegate.claim(request);
		return (result.handle() != null) ? ClaimResult.acquired(result.record(), new Handle(result.handle())) : result;
	}

	@Override
	public Optional<IdempotencyRecord> find(RecordId id) {
		check("find");
		return this.delegate.find(id);
	}

	@Override
	public boolean delete(RecordId id) {
		check("delete");
		return this.delegate.delete(id);
	}

	@Override
	public String backend() {
		return this.delegate.backend();
	}

	private final class Handle implements ClaimHandle {

		private final ClaimHandle delegate;

		Handle(ClaimHandle delegate) {
			this.delegate = delegate;
		}

		@Override
		public boolean complete(@Nullable String response) {
			check("complete");
			return this.delegate.complete(response);
		}

		@Override
		public boolean fail(Throwable failure) {
			check("fail");
			return this.delegate.fail(failure);
		}

		@Override
		public boolean release(Throwable failure) {
			check("release");
			return this.delegate.release(failure);
		}

		@Override
		public boolean abandon() {
			check("abandon");
			return this.delegate.abandon();
		}

		@Override
		public boolean joinsTransaction() {
			return this.delegate.joinsTransaction();
		}

		@Override
		public boolean renew() {
			check("renew");
			return this.delegate.renew();
		}

		@Override
		public boolean saveRecoveryPoint(String recoveryPoint) {
			check("saveRecoveryPoint");
			return this.delegate.saveRecoveryPoint(recoveryPoint);
		}

	}

}
