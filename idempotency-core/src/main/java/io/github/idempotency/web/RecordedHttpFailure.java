package io.github.idempotency.web;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.IdempotentFailureReplayedException;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.web.ErrorResponse;
import org.springframework.web.bind.annotation.ResponseStatus;

/**
 * Carries a permanent failure of a handler method through the engine so that the record
 * stores the HTTP status it maps to: the record's error type is this class, its message
 * {@code HTTP <status> from <original type>[: <original message>]}. The first caller
 * still gets the original exception; a duplicate gets an
 * {@link IdempotentFailureReplayedException} that {@link #statusOf} reads back.
 */
final class RecordedHttpFailure extends RuntimeException {

	private static final Pattern MESSAGE = Pattern.compile("HTTP (\\d{3}) from ([^:\\s]+)(?:: (.*))?", Pattern.DOTALL);

	RecordedHttpFailure(int status, Throwable original) {
		super("HTTP " + status + " from " + original.getClass().getName()
				+ ((original.getMessage() != null) ? ": " + original.getMessage() : ""), original, false, false);
	}

	/**
	 * The status a failure maps to: an {@link ErrorResponse}'s status, else the
	 * {@link ResponseStatus} on its class, else 500.
	 * @param failure what a handler method threw
	 * @return the HTTP status code
	 */
	static int statusOf(Throwable failure) {
		if (failure instanceof ErrorResponse errorResponse) {
			return errorResponse.getStatusCode().value();
		}
		ResponseStatus status = AnnotatedElementUtils.findMergedAnnotation(failure.getClass(), ResponseStatus.class);
		return (status != null) ? status.code().value() : 500;
	}

	/**
	 * The status stored with a replayed failure.
	 * @param replayed the replayed failure
	 * @return the stored status, or 500 when the failure was not recorded by a handler
	 * method
	 */
	static int statusOf(IdempotentFailureReplayedException replayed) {
		Matcher matcher = match(replayed);
		return (matcher != null) ? Integer.parseInt(matcher.group(1)) : 500;
	}

	/**
	 * The class name of the exception the original run threw.
	 * @param replayed the replayed failure
	 * @return the original type
	 */
	static String originalType(IdempotentFailureReplayedException replayed) {
		Matcher matcher = match(replayed);
		return (matcher != null) ? matcher.group(2) : replayed.getOriginalType();
	}

	private static @Nullable Matcher match(IdempotentFailureReplayedException replayed) {
		String message = replayed.getOriginalMessage();
		if (!RecordedHttpFailure.class.getName().equals(replayed.getOriginalType()) || message == null) {
			return null;
		}
		Matcher matcher = MESSAGE.matcher(message);
		return matcher.matches() ? matcher : null;
	}

}
