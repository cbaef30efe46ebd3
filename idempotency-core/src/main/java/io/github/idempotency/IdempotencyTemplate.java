package io.github.idempotency;

import java.util.List;
import java.util.function.Function;
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

	/**
	 * Runs a batch: each request is its own operation (its own record, metrics and
	 * outcome), the claims are made together. {@code action} runs once for each request
	 * whose key is new, in the order of the requests; a key done before is answered with its
	 * stored result, a key named twice runs once (both answered with its result). A key that
	 * failed permanently before, and a key that is invalid or was used with another
	 * payload, are skipped (the latter with a WARN): their answer is {@code null}. A key
	 * running elsewhere is waited for or rejected as the requests' {@code onInProgress}
	 * says; a rejection releases what the batch acquired and throws
	 * {@link IdempotencyInProgressException} before any action ran.
	 * <p>
	 * When {@code action} throws for one request, the requests before it are completed,
	 * that one is failed ({@code recordFailureFor}) or released, the rest are released, and
	 * the exception is rethrown unchanged.
	 * @param <T> the result type
	 * @param requests the batch: one workflow and the same settings, keys and payloads of
	 * their own
	 * @param resultType the type the stored results are read back as
	 * @param action runs one request
	 * @return one answer per request, in the order of the requests
	 * @throws IllegalArgumentException when the requests differ in more than key and payload
	 */
	<T> List<@Nullable T> executeAll(List<IdempotentRequest> requests, Class<T> resultType,
			Function<IdempotentRequest, T> action);

	/**
	 * Like {@link #executeAll(List, Class, Function)} for a generic result type.
	 * @param <T> the result type
	 * @param requests the batch
	 * @param resultType the type the stored results are read back as
	 * @param action runs one request
	 * @return one answer per request, in the order of the requests
	 */
	<T> List<@Nullable T> executeAll(List<IdempotentRequest> requests, ParameterizedTypeReference<T> resultType,
			Function<IdempotentRequest, T> action);

}
