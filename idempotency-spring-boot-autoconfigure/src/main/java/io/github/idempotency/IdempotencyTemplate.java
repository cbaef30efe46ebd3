package io.github.idempotency;

import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import org.springframework.core.ParameterizedTypeReference;

/**
 * The programmatic twin of {@link Idempotent}, for code without a proxy: functional
 * {@code Consumer<Message<?>>} beans, batch code, tests. It runs the same engine as the
 * annotation and produces the same records, metrics and exceptions.
 *
 * <pre class="code">
 * Receipt receipt = template.execute(IdempotentRequest.of("payment", key), Receipt.class,
 *         () -&gt; payments.charge(request));
 * </pre>
 */
public interface IdempotencyTemplate {

	/**
	 * Runs {@code action} once for the request's key, or returns the stored result of the
	 * run that happened before.
	 * @param <T> the result type
	 * @param request the key and its settings
	 * @param resultType the type the stored result is read back as
	 * @param action the operation
	 * @return the result of this run or of the earlier one
	 */
	<T> @Nullable T execute(IdempotentRequest request, Class<T> resultType, Supplier<T> action);

	/**
	 * Like {@link #execute(IdempotentRequest, Class, Supplier)} for a generic result type.
	 * @param <T> the result type
	 * @param request the key and its settings
	 * @param resultType the type the stored result is read back as
	 * @param action the operation
	 * @return the result of this run or of the earlier one
	 */
	<T> @Nullable T execute(IdempotentRequest request, ParameterizedTypeReference<T> resultType, Supplier<T> action);

	/**
	 * Runs {@code action} once for the request's key; stores no result.
	 * @param request the key and its settings
	 * @param action the operation
	 */
	void run(IdempotentRequest request, Runnable action);

}
