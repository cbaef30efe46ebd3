package io.github.idempotency.web.reactive;

import java.time.Duration;

import io.github.idempotency.IdempotencyException;
import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.IdempotencyKeyReusedException;
import io.github.idempotency.IdempotencyLeaseLostException;
import io.github.idempotency.IdempotencyStoreException;
import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.InvalidIdempotencyKeyException;
import io.github.idempotency.MissingIdempotencyKeyException;
import io.github.idempotency.internal.http.IdempotencyProblems;
import io.github.idempotency.internal.http.RecordedHttpFailure;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;

/**
 * Answers the idempotency exceptions of a WebFlux request with RFC 9457 problem details,
 * the same as on Spring MVC ({@link IdempotencyProblems}): a missing or invalid key 400, a
 * key reused with another request 422, a key still in progress 409 (with
 * {@code Retry-After}), a store that fails 503 (with {@code Retry-After}), a run whose
 * lease another request took over 409. A replayed permanent failure is answered as the
 * application's exception handling answered it the first time.
 * <p>
 * Ordered last: an application's own {@code @ControllerAdvice} that handles these
 * exceptions (or any of their supertypes) wins.
 */
@ControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE)
public class ReactiveIdempotencyProblemHandler {

	private final IdempotencyProblems problems;

	/**
	 * Creates the handler.
	 * @param keyHeader the request header that carries the key (named in the details)
	 * @param replayedHeader the response header that marks a replay
	 * @param retryAfter the {@code Retry-After} of a 409 and a 503
	 */
	public ReactiveIdempotencyProblemHandler(String keyHeader, String replayedHeader, Duration retryAfter) {
		this.problems = new IdempotencyProblems(keyHeader, replayedHeader, retryAfter);
	}

	/**
	 * Answers an idempotency exception with its problem.
	 * @param ex a missing or invalid key, a key reused, a key in progress, a store that
	 * failed, a lease another request took over
	 * @return the problem
	 */
	@ExceptionHandler({ MissingIdempotencyKeyException.class, InvalidIdempotencyKeyException.class,
			IdempotencyKeyReusedException.class, IdempotencyInProgressException.class, IdempotencyStoreException.class,
			IdempotencyLeaseLostException.class })
	ResponseEntity<ProblemDetail> problem(IdempotencyException ex) {
		return this.problems.of(ex);
	}

	@ExceptionHandler(IdempotentFailureReplayedException.class)
	ResponseEntity<?> failureReplayed(IdempotentFailureReplayedException ex) {
		ResponseEntity<?> answer = this.problems.failureReplayed(ex);
		// only Spring MVC stores a sendError; on WebFlux the error page's answer is stored whole
		return (answer != null) ? answer : ResponseEntity.status(HttpStatusCode.valueOf(RecordedHttpFailure.statusOf(ex)))
			.headers(this.problems.replayedHeaders())
			.build();
	}

}
