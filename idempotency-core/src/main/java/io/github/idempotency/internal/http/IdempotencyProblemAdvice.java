package io.github.idempotency.internal.http;

import java.time.Duration;

import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.IdempotencyKeyReusedException;
import io.github.idempotency.IdempotencyLeaseLostException;
import io.github.idempotency.IdempotencyStoreException;
import io.github.idempotency.InvalidIdempotencyKeyException;
import io.github.idempotency.MissingIdempotencyKeyException;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;

/**
 * The exception handlers both web stacks share: each idempotency exception answered with
 * its problem ({@link IdempotencyProblems}). A stack's advice adds how it replays a
 * recorded failure. Not API.
 */
public abstract class IdempotencyProblemAdvice {

	protected final IdempotencyProblems problems;

	protected IdempotencyProblemAdvice(String keyHeader, String replayedHeader, Duration retryAfter) {
		this.problems = new IdempotencyProblems(keyHeader, replayedHeader, retryAfter);
	}

	@ExceptionHandler(MissingIdempotencyKeyException.class)
	protected ResponseEntity<ProblemDetail> missingKey(MissingIdempotencyKeyException ex) {
		return this.problems.missingKey();
	}

	@ExceptionHandler(InvalidIdempotencyKeyException.class)
	protected ResponseEntity<ProblemDetail> invalidKey(InvalidIdempotencyKeyException ex) {
		return this.problems.invalidKey();
	}

	@ExceptionHandler(IdempotencyKeyReusedException.class)
	protected ResponseEntity<ProblemDetail> keyReused(IdempotencyKeyReusedException ex) {
		return this.problems.keyReused();
	}

	@ExceptionHandler(IdempotencyInProgressException.class)
	protected ResponseEntity<ProblemDetail> inProgress(IdempotencyInProgressException ex) {
		return this.problems.inProgress();
	}

	@ExceptionHandler(IdempotencyStoreException.class)
	protected ResponseEntity<ProblemDetail> storeFailed(IdempotencyStoreException ex) {
		return this.problems.storeFailed();
	}

	@ExceptionHandler(IdempotencyLeaseLostException.class)
	protected ResponseEntity<ProblemDetail> leaseLost(IdempotencyLeaseLostException ex) {
		return this.problems.leaseLost();
	}

}
