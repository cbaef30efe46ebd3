package io.github.idempotency.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.Idempotent;

/**
 * Adapts {@link Idempotent} to a kind of method without changing the aspect: a default
 * key and payload where the annotation leaves them out, a different shape of what is
 * stored, a call wrapped before and after the engine. The web layer uses it for Spring
 * MVC and WebFlux handler methods, the Kafka and RabbitMQ adapters for listeners. One adapter
 * adapts a method: two that answer for the same method fail its resolution (an HTTP
 * handler is never a listener); a method no adapter answers for must name its
 * {@code key}.
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
		 * The type to store instead of the declared result type (what the call returns to
		 * the adapter, such as the answer an HTTP handler method's response was); called
		 * once, when the method is resolved, and may refuse a result type the adapter cannot
		 * work with.
		 * @param declared the method's (generic) result type
		 * @return the type to store
		 * @throws IllegalArgumentException when the method cannot be adapted
		 */
		default Type resultType(Type declared) {
			return declared;
		}

		/**
		 * Whether each call is fingerprinted: by default when the annotation names a
		 * {@code payload}; an adapter that fingerprints a payload of its own (an HTTP
		 * request's body) answers {@code true}.
		 * @param declared whether the annotation names a payload
		 * @return whether each call is fingerprinted
		 */
		default boolean fingerprinted(boolean declared) {
			return declared;
		}

		/**
		 * The failures recorded as permanent ({@code FAILED}, replayed to later calls)
		 * instead of the annotation's {@code recordFailureFor}, such as an exception of the
		 * adapter's own that carries what a recorded failure answered.
		 * @param declared the annotation's {@code recordFailureFor}
		 * @return the failures to record
		 */
		default List<Class<? extends Throwable>> recordFailureFor(List<Class<? extends Throwable>> declared) {
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

		/**
		 * Runs one call of a batch method ({@code Idempotent#batch}); by default as it is.
		 * @param call the engine, the delivered batch and the method
		 * @throws Throwable what the method or the engine threw
		 */
		default void invokeBatch(BatchCall call) throws Throwable {
			call.execute((positions, arguments) -> arguments);
		}

	}

	/**
	 * One call of an adapted batch method.
	 */
	interface BatchCall {

		/**
		 * The batch as it was delivered (the method's batch argument).
		 * @return the elements
		 */
		List<?> batch();

		/**
		 * The arguments of the call, as it was made.
		 * @return the arguments
		 */
		@Nullable Object[] arguments();

		/**
		 * Runs the batch on the engine, which calls the method at most once, with the
		 * elements it must run; it is not called when none must.
		 * @param arguments what the method is called with: given the positions (ascending
		 * indexes into {@link #batch()}) of the elements that run and the arguments with
		 * the batch parameter narrowed to them, the arguments to call it with
		 * @throws Throwable what the method or the engine threw
		 */
		void execute(BatchArguments arguments) throws Throwable;

	}

	/**
	 * The arguments a batch method is called with.
	 */
	@FunctionalInterface
	interface BatchArguments {

		/**
		 * The arguments to call the method with.
		 * @param positions the positions in the delivered batch of the elements that run
		 * @param arguments the arguments, the batch parameter narrowed to those elements
		 * @return the arguments to call the method with ({@code arguments}, changed or not)
		 */
		@Nullable Object[] apply(int[] positions, @Nullable Object[] arguments);

		/**
		 * Once the method returned: from which of the elements it was called with it asked
		 * its broker to deliver them again (a Kafka listener's {@code nack(index, sleep)}).
		 * Those are given back, not completed, so that the delivery to come runs them.
		 * @return the index in the list the method received, or {@code -1} when it asked
		 * for nothing to come again
		 */
		default int redeliveredFrom() {
			return -1;
		}

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
		 * @return what the engine returned (in the adaptation's {@link Adaptation#resultType result type})
		 * @throws Throwable what the action or the engine threw
		 */
		@Nullable Object execute(@Nullable Object key, @Nullable Object payload, Action action) throws Throwable;

		/**
		 * Runs the prepared operation, whose result type is asynchronous, on the engine
		 * without holding a thread while it waits for a run of the same key elsewhere
		 * (an asynchronous result of the adaptation's {@link Adaptation#resultType result type}).
		 * @param key the key
		 * @param payload the payload to fingerprint
		 * @param action what runs when the key is claimed, returning the asynchronous result
		 * @param claims where the claims are made (threads that may block on the store)
		 * @return the value of the settled result
		 */
		default CompletableFuture<@Nullable Object> executeAsync(@Nullable Object key, @Nullable Object payload,
				Action action, Executor claims) {
			throw new UnsupportedOperationException("this invocation runs the engine synchronously only");
		}

		/**
		 * Runs the prepared operation as {@link #executeAsync(Object, Object, Action, Executor)}
		 * does; when the store is non-blocking ({@link #isNonBlocking()}), its claims are made
		 * without {@code claims}, subscribed with {@code context} (where a store finds the
		 * caller's reactive transaction). The default ignores the context.
		 * @param key the key
		 * @param payload the payload to fingerprint
		 * @param action what runs when the key is claimed, returning the asynchronous result
		 * @param claims where the claims are made on a blocking store
		 * @param context the caller's Reactor {@code ContextView}
		 * @return the value of the settled result
		 */
		default CompletableFuture<@Nullable Object> executeAsync(@Nullable Object key, @Nullable Object payload,
				Action action, Executor claims, Object context) {
			return executeAsync(key, payload, action, claims);
		}

		/**
		 * Whether the engine's store is non-blocking: an asynchronous run is then claimed and
		 * settled without a thread that waits on the store, so it may settle on the thread its
		 * result completes on, an event loop included.
		 * @return {@code true} with a non-blocking store; the default is {@code false}
		 */
		default boolean isNonBlocking() {
			return false;
		}

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

	/**
	 * What runs when a call's key is claimed.
	 */
	@FunctionalInterface
	interface Action {

		/**
		 * Runs the call.
		 * @return its result
		 * @throws Throwable what it threw
		 */
		@Nullable Object run() throws Throwable;

	}

}
