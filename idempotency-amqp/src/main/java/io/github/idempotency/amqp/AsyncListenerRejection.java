package io.github.idempotency.amqp;

import java.lang.reflect.Method;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.aop.IdempotentMethodAdapter;
import org.springframework.amqp.AmqpRejectAndDontRequeueException;
import org.springframework.core.KotlinDetector;
import org.springframework.util.ClassUtils;

/**
 * Rejects without requeue the not-retryable failures of an asynchronous
 * {@code @RabbitListener} ({@code CompletableFuture}, {@code CompletionStage}, {@code Mono}
 * or a Kotlin {@code suspend fun}). Spring AMQP settles such a listener's failure itself,
 * requeueing it unless an {@link AmqpRejectAndDontRequeueException} is among its causes: the
 * container's error handler ({@link IdempotencyFatalExceptionStrategy}) never sees it, so a
 * replayed failure or a reused key would come back for ever. Each such failure
 * ({@link IdempotencyFatalExceptionStrategy#isNotRetryable}) is wrapped in one, to the
 * queue's dead-letter exchange as for a listener that returns; the others (a key in
 * progress, the method's own failure that released its key) are requeued.
 */
final class AsyncListenerRejection implements IdempotentMethodAdapter.Adaptation {

	static final AsyncListenerRejection INSTANCE = new AsyncListenerRejection();

	private static final boolean REACTOR_PRESENT = ClassUtils.isPresent("reactor.core.publisher.Mono",
			AsyncListenerRejection.class.getClassLoader());

	private AsyncListenerRejection() {
	}

	/**
	 * Whether Spring AMQP settles what {@code method} returns after it returns.
	 * @param method a listener method
	 * @return {@code true} for an asynchronous result or a suspending function
	 */
	static boolean isAsync(Method method) {
		Class<?> type = method.getReturnType();
		return KotlinDetector.isSuspendingFunction(method) || CompletionStage.class.isAssignableFrom(type)
				|| (REACTOR_PRESENT && Monos.isMono(type));
	}

	@Override
	public @Nullable Object invoke(@Nullable Object key, @Nullable Object payload,
			IdempotentMethodAdapter.Invocation invocation) throws Throwable {
		Object result;
		try {
			result = invocation.execute(key, payload, invocation::proceed);
		}
		catch (Throwable ex) {
			// a suspend fun's refusal: thrown in its coroutine, settled as an asynchronous failure
			throw rejected(ex);
		}
		if (result instanceof CompletionStage<?> stage) {
			CompletableFuture<Object> mapped = new CompletableFuture<>();
			stage.whenComplete((value, failure) -> {
				if (failure != null) {
					Throwable cause = (failure instanceof CompletionException && failure.getCause() != null)
							? failure.getCause() : failure;
					mapped.completeExceptionally(rejected(cause));
				}
				else {
					mapped.complete(value);
				}
			});
			return mapped;
		}
		if (REACTOR_PRESENT && result != null && Monos.isMono(result.getClass())) {
			return Monos.rejecting(result);
		}
		return result;
	}

	private static Throwable rejected(Throwable failure) {
		return IdempotencyFatalExceptionStrategy.isNotRetryable(failure)
				? new AmqpRejectAndDontRequeueException(String.valueOf(failure.getMessage()), failure) : failure;
	}

	/** Reactor, touched only when it is on the class path. */
	private static final class Monos {

		static boolean isMono(Class<?> type) {
			return reactor.core.publisher.Mono.class.isAssignableFrom(type);
		}

		static Object rejecting(Object mono) {
			return ((reactor.core.publisher.Mono<?>) mono).onErrorMap(AsyncListenerRejection::rejected);
		}

	}

}
