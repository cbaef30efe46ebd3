package io.github.idempotency.internal.http;

import java.lang.reflect.Type;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.internal.PermanentFailures;
import org.springframework.core.ResolvableType;

/**
 * One claimed HTTP exchange, from the call of its handler method to its complete response,
 * the same on both stacks, and the operation the engine runs for such a method
 * ({@link #definition}). The engine holds the claim until the stack says what the client
 * received ({@link #answered}); the record then stores that answer as the handler method
 * ended: a return as the run's result, a permanent failure ({@code recordFailureFor}, as
 * {@link PermanentFailures} tells) as a {@link RecordedHttpFailure} carrying the answer, any
 * other failure as a release.
 */
public final class ExchangeRun {

	/**
	 * What the engine stores of a handler method's run, on either stack: the answer, once
	 * the response is complete.
	 */
	public static final Type ANSWER_TYPE = ResolvableType.forClassWithGenerics(CompletableFuture.class, HttpAnswer.class)
		.getType();

	private final CompletableFuture<HttpAnswer> answer = new CompletableFuture<>();

	private final PermanentFailures permanentFailures;

	private volatile @Nullable Throwable failure;

	/**
	 * A run of a handler method.
	 * @param permanentFailures the method's {@code recordFailureFor} types
	 */
	public ExchangeRun(PermanentFailures permanentFailures) {
		this.permanentFailures = permanentFailures;
	}

	/**
	 * The failures the engine records for a handler method, on either stack: when the
	 * method has permanent failures, the {@link RecordedHttpFailure} that carries one's
	 * answer.
	 * @param declared the method's {@code recordFailureFor} types
	 * @return the one failure type the engine records, or none
	 */
	public static List<Class<? extends Throwable>> recordFailureFor(List<Class<? extends Throwable>> declared) {
		return declared.isEmpty() ? List.of() : List.of(RecordedHttpFailure.class);
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
	 * The run stopped before its end (the client went away inside the method's
	 * transaction, which rolls back): nothing is stored, the key is given back, whatever
	 * failures the method records.
	 * @param reason why it stopped
	 */
	public void stopped(Throwable reason) {
		this.answer.completeExceptionally(reason);
	}

	/**
	 * Whether a failure of the method is one of its permanent ones, whose answer is stored.
	 * @param failure what the method threw
	 * @return whether it is recorded
	 */
	public boolean isPermanent(Throwable failure) {
		return this.permanentFailures.includes(failure);
	}

}
