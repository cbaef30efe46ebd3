package io.github.idempotency.autoconfigure;

import io.github.idempotency.internal.InvalidIdempotentMethodException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports an {@code @Idempotent} method that cannot work
 * ({@link InvalidIdempotentMethodException}, from the checks made when each bean is created):
 * the method, what is wrong with it and how to put it right.
 */
final class InvalidIdempotentMethodFailureAnalyzer extends AbstractFailureAnalyzer<InvalidIdempotentMethodException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, InvalidIdempotentMethodException cause) {
		String fix = cause.getFix();
		String action = (fix != null) ? sentence(Character.toUpperCase(fix.charAt(0)) + fix.substring(1))
				: "Correct @Idempotent on " + cause.getMethod() + " as the description says.";
		return new FailureAnalysis(sentence("@Idempotent on " + cause.getMethod() + " cannot work: "
				+ cause.getProblem()), action, cause);
	}

	private static String sentence(String text) {
		return text.endsWith(".") ? text : text + ".";
	}

}
