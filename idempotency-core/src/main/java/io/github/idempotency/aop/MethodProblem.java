package io.github.idempotency.aop;

import org.jspecify.annotations.Nullable;

/**
 * Why an {@code @Idempotent} method or one of its attributes cannot work, and how to put it
 * right where that is known; thrown as such while the method is resolved, and turned into
 * an {@link io.github.idempotency.internal.InvalidIdempotentMethodException} that names the
 * method.
 */
final class MethodProblem extends IllegalArgumentException {

	private final String problem;

	private final @Nullable String fix;

	MethodProblem(String problem, @Nullable String fix) {
		this(problem, fix, null);
	}

	MethodProblem(String problem, @Nullable String fix, @Nullable Throwable cause) {
		super(problem + ((fix != null) ? "; " + fix : ""), cause);
		this.problem = problem;
		this.fix = fix;
	}

	/**
	 * The same problem, said of {@code subject}: {@code 'key' = #msg.id: } and this one's.
	 */
	MethodProblem of(String subject) {
		return new MethodProblem(subject + this.problem, this.fix, getCause());
	}

	String problem() {
		return this.problem;
	}

	@Nullable String fix() {
		return this.fix;
	}

}
