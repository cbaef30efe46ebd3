package io.github.idempotency.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Type;

import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodParameter;
import org.springframework.core.ResolvableType;
import org.springframework.util.ClassUtils;

/**
 * A Kotlin {@code suspend fun} as the engine sees it. Spring AOP (since Spring Framework
 * 6.1) invokes a suspending method through {@code CoroutinesUtils.invokeSuspendingFunction}:
 * the interceptor's {@code proceed()} returns a {@code Mono} of the function's value (empty
 * for {@code Unit}), and the proxy awaits the {@code Mono} the interceptor returns as the
 * coroutine's result. WebFlux, Spring Kafka and Spring AMQP call a suspending handler or
 * listener the same way. So its result type is {@code Mono<T>}, {@code T} its Kotlin return
 * type ({@code Void} for {@code Unit}), and the engine follows it as any {@code Mono}: a
 * claimed run is subscribed by the engine, a caller's cancellation only detaches the caller.
 * Kotlin stays optional: without it no method is suspending.
 */
final class SuspendingFunctions {

	private static final boolean COROUTINES_REACTOR_PRESENT = ClassUtils
		.isPresent("kotlinx.coroutines.reactor.MonoKt", SuspendingFunctions.class.getClassLoader());

	private SuspendingFunctions() {
	}

	/**
	 * The result type of {@code method} as its callers receive it through Spring: its
	 * generic return type, or {@code Mono<T>} for a suspending function returning {@code T}.
	 * @param method the method
	 * @return the result type, possibly with type variables
	 * @throws IllegalArgumentException for a suspending function Spring cannot call as a
	 * {@code Mono} (kotlin-reflect or kotlinx-coroutines-reactor missing) or whose value is
	 * a stream or a publisher
	 */
	static Type returnType(Method method) {
		if (!KotlinDetector.isSuspendingFunction(method)) {
			return method.getGenericReturnType();
		}
		if (!KotlinDetector.isKotlinReflectPresent() || !COROUTINES_REACTOR_PRESENT) {
			throw new IllegalArgumentException("it is a suspend fun, which Spring calls through kotlin-reflect and "
					+ "kotlinx-coroutines-reactor; add both to the class path");
		}
		// the Kotlin return type, as Spring's own adapters read it
		Type value = new MethodParameter(method, -1).getGenericParameterType();
		Class<?> raw = ResolvableType.forType(value).toClass();
		if (raw.getName().equals("kotlin.Unit")) {
			value = Void.class;
		}
		else if (raw.getName().equals("kotlinx.coroutines.flow.Flow")
				|| org.reactivestreams.Publisher.class.isAssignableFrom(raw)) {
			throw new IllegalArgumentException("it is a suspend fun returning " + raw.getName() + ", a stream or a "
					+ "publisher whose value is not stored; return the value itself (a List for a stream)");
		}
		return ResolvableType.forClassWithGenerics(reactor.core.publisher.Mono.class, ResolvableType.forType(value))
			.getType();
	}

}
