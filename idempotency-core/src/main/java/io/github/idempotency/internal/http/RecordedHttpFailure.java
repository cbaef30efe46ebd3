package io.github.idempotency.internal.http;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.store.IdempotencyRecord;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.web.ErrorResponse;
import org.springframework.web.bind.annotation.ResponseStatus;

/**
 * Carries a permanent failure of a handler method through the engine so that the record
 * stores the answer the application's exception handling gave it: the record's error type
 * is this class, its message {@code HTTP <status> from <original type> as <answer>}, the
 * answer as JSON (the status, the allow-listed headers, and the body or the
 * {@code sendError} that left the body to the error page). When there is no such answer,
 * or it does not fit the record, the message is
 * {@code HTTP <status> from <original type>[: <original message>]} and a replay is a
 * problem with that status. The first caller still gets the original exception; a
 * duplicate gets an {@link IdempotentFailureReplayedException} that {@link #statusOf} and
 * {@link #answerOf} read back.
 */
public final class RecordedHttpFailure extends RuntimeException {

	private static final Pattern MESSAGE = Pattern.compile("HTTP (\\d{3}) from ([^:\\s]+)(?: as (\\{.*\\})|: (.*))?",
			Pattern.DOTALL);

	private static final JsonMapper JSON = JsonMapper.builder().build();

	/**
	 * Carries a permanent failure.
	 * @param status the status the failure was answered with
	 * @param original what the handler method threw
	 * @param answer the answer the application's exception handling gave it, or
	 * {@code null} when there is none to store
	 */
	public RecordedHttpFailure(int status, Throwable original, @Nullable HttpAnswer answer) {
		super(message(status, original, answer), original, false, false);
	}

	private static String message(int status, Throwable original, @Nullable HttpAnswer answer) {
		String prefix = "HTTP " + status + " from " + original.getClass().getName();
		if (answer != null) {
			String message = prefix + " as " + JSON.writeValueAsString(answer);
			// the answer is kept only when the record keeps it whole
			if (message.length() <= IdempotencyRecord.MAX_ERROR_MESSAGE_LENGTH
					&& message.equals(IdempotencyRecord.errorMessageOf(new RuntimeException(message)))) {
				return message;
			}
		}
		return prefix + ((original.getMessage() != null) ? ": " + original.getMessage() : "");
	}

	/**
	 * The status a failure maps to: an {@link ErrorResponse}'s status, else the
	 * {@link ResponseStatus} on its class, else 500.
	 * @param failure what a handler method threw
	 * @return the HTTP status code
	 */
	public static int statusOf(Throwable failure) {
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
	public static int statusOf(IdempotentFailureReplayedException replayed) {
		Matcher matcher = match(replayed);
		return (matcher != null) ? Integer.parseInt(matcher.group(1)) : 500;
	}

	/**
	 * The answer stored with a replayed failure.
	 * @param replayed the replayed failure
	 * @return the answer, or {@code null} when none was stored
	 */
	public static @Nullable HttpAnswer answerOf(IdempotentFailureReplayedException replayed) {
		Matcher matcher = match(replayed);
		if (matcher == null || matcher.group(3) == null) {
			return null;
		}
		try {
			return JSON.readValue(matcher.group(3), HttpAnswer.class);
		}
		catch (RuntimeException ex) {
			return null;
		}
	}

	/**
	 * The class name of the exception the original run threw.
	 * @param replayed the replayed failure
	 * @return the original type
	 */
	public static String originalType(IdempotentFailureReplayedException replayed) {
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
