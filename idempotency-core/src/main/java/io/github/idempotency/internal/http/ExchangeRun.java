package io.github.idempotency.internal.http;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

/**
 * One claimed HTTP exchange, from the call of its handler method to its complete response,
 * the same on both stacks. The engine holds the claim until the stack says what the client
 * received ({@link #answered}); the record then stores that answer as the handler method
 * ended: a return as the run's result, a permanent failure ({@code recordFailureFor}) as a
 * {@link RecordedHttpFailure} carrying the answer, any other failure as a release.
 */
public final class ExchangeRun {

	private final CompletableFuture<HttpAnswer> answer = new CompletableFuture<>();

	private final List<Class<? extends Throwable>> permanentFailures;

	private volatile @Nullable Throwable failure;

	/**
	 * A run of a handler method.
	 * @param permanentFailures the method's {@code recordFailureFor} types
	 */
	public ExchangeRun(List<Class<? extends Throwable>> permanentFailures) {
		this.permanentFailures = permanentFailures;
	}

	/**
	 * What the engine settles the claim by: the answer, once the response is complete.
	 * @return the answer to come
	 */
	public CompletableFuture<HttpAnswer> answer() {
		return this.answer;
	}

	/**
	 * The handler method threw: the answer the stack then writes is stored as that
	 * failure says.
	 * @param failure what the method threw
	 */
	public void threw(Throwable failure) {
		this.failure = failure;
	}

	/**
	 * The response is complete: settles the claim with what the client received.
	 * @param received the answer, as written
	 */
	public void answered(HttpAnswer received) {
		Throwable failure = this.failure;
		if (failure == null) {
			this.answer.complete(received);
		}
		else if (isPermanent(failure)) {
			this.answer.completeExceptionally(new RecordedHttpFailure(received.status(), failure, received));
		}
		else {
			this.answer.completeExceptionally(failure);
		}
	}

	/**
	 * Whether a failure of the method is one of its permanent ones, whose answer is stored.
	 * @param failure what the method threw
	 * @return whether it is recorded
	 */
	public boolean isPermanent(Throwable failure) {
		for (Class<? extends Throwable> type : this.permanentFailures) {
			if (type.isInstance(failure)) {
				return true;
			}
		}
		return false;
	}

}
