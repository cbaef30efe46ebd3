package io.github.idempotency.aop;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.Idempotent;
import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.internal.OperationDefinition;

/**
 * Adapts {@link Idempotent} to a kind of method without changing the aspect: a default
 * key and payload where the annotation leaves them out, a different shape of what is
 * stored, a call wrapped before and after the engine. The web layer uses it for Spring
 * MVC handler methods. The first adapter (in {@code Ordered} order) that answers for a
 * method adapts it; a method no adapter answers for must name its {@code key}.
 */
@FunctionalInterface
public interface IdempotentMethodAdapter {

	/**
	 * The adaptation of {@code method}, decided once when the method is resolved.
	 * @param method the annotated method
	 * @param targetClass the class of the bean
	 * @param annotation the method's merged annotation
	 * @return the adaptation, or {@code null} when this adapter does not apply
	 */
	@Nullable Adaptation adapt(Method method, Class<?> targetClass, Idempotent annotation);

	/**
	 * How one method is adapted.
	 */
	interface Adaptation {

		/**
		 * The operation to prepare instead of the one the annotation declares (another
		 * result type to store, another fingerprint setting, other permanent failures).
		 * @param declared what the annotation declares
		 * @return the definition to prepare
		 */
		default OperationDefinition definition(OperationDefinition declared) {
			return declared;
		}

		/**
		 * Runs one call.
		 * @param key the value of the annotation's key expression, or {@code null} when
		 * it has none
		 * @param payload the value of the annotation's payload expression, or
		 * {@code null} when it has none
		 * @param invocation the engine and the method
		 * @return what the method's caller gets
		 * @throws Throwable what the method or the engine threw
		 */
		@Nullable Object invoke(@Nullable Object key, @Nullable Object payload, Invocation invocation)
				throws Throwable;

	}

	/**
	 * One call of an adapted method.
	 */
	interface Invocation {

		/**
		 * Runs the prepared operation on the engine.
		 * @param key the key
		 * @param payload the payload to fingerprint
		 * @param action what runs when the key is claimed, usually wrapping
		 * {@link #proceed()}
		 * @return what the engine returned (in the adapted definition's result type)
		 * @throws Throwable what the action or the engine threw
		 */
		@Nullable Object execute(@Nullable Object key, @Nullable Object payload, IdempotencyEngine.Action action)
				throws Throwable;

		/**
		 * The arguments of the call.
		 * @return the arguments
		 */
		@Nullable Object[] arguments();

		/**
		 * Runs the method itself.
		 * @return the method's result
		 * @throws Throwable what the method threw
		 */
		@Nullable Object proceed() throws Throwable;

	}

}
