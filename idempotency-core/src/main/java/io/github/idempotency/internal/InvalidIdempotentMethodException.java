package io.github.idempotency.internal;

import org.jspecify.annotations.Nullable;

/**
 * An {@code @Idempotent} method that cannot work (an expression that names no parameter or
 * reads what the parameter's class lacks, a malformed expression or duration, an unusable
 * result type, an advice outside the method's transaction), told when the method is
 * resolved, which the starter does at start: what is wrong and, where it is known, how to
 * put it right, kept apart so that a start-up failure report can show each.
 */
public final class InvalidIdempotentMethodException extends IllegalStateException {

	private final String method;

	private final String problem;

	private final @Nullable String fix;

	/**
	 * @param method the method, as {@code class.method}
	 * @param problem what is wrong with it
	 * @param fix how to put it right, or {@code null} when only the problem says
	 * @param cause what found the problem, or {@code null}
	 */
	public InvalidIdempotentMethodException(String method, String problem, @Nullable String fix,
			@Nullable Throwable cause) {
		super("@Idempotent on " + method + " cannot work: " + problem + ((fix != null) ? "; " + fix : ""), cause);
		this.method = method;
		this.problem = problem;
		this.fix = fix;
	}

	/**
	 * @return the method, as {@code class.method}
	 */
	public String getMethod() {
		return this.method;
	}

	/**
	 * @return what is wrong with the method
	 */
	public String getProblem() {
		return this.problem;
	}

	/**
	 * @return how to put it right, or {@code null} when only the problem says
	 */
	public @Nullable String getFix() {
		return this.fix;
	}

}
