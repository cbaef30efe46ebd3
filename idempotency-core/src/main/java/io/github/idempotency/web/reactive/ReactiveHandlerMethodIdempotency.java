package io.github.idempotency.web.reactive;

import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentSkipListSet;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.ContextView;

import io.github.idempotency.Idempotent;
import io.github.idempotency.aop.IdempotentMethodAdapter;
import io.github.idempotency.internal.PermanentFailures;
import io.github.idempotency.internal.ReactiveTransactions;
import io.github.idempotency.internal.http.ExchangeRun;
import io.github.idempotency.internal.http.HttpAnswer;
import io.github.idempotency.internal.http.KeyScope;
import io.github.idempotency.internal.http.MultipartParameters;
import io.github.idempotency.internal.http.RecordedHttpFailure;
import org.springframework.beans.factory.BeanClassLoaderAware;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.core.Ordered;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.HttpEntity;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.stereotype.Controller;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.method.annotation.ExceptionHandlerMethodResolver;
import org.springframework.web.server.ServerWebExchange;

/**
 * Adapts {@link Idempotent} to annotated WebFlux handler methods ({@code @RequestMapping}
 * methods of a {@code @Controller}) that return {@code Mono<T>},
 * {@code Mono<ResponseEntity<T>>} or {@code Mono<Void>}, or a plain {@code T},
 * {@code ResponseEntity<T>} or {@code void}, with the semantics of the Spring MVC adapter:
 * the key from the {@code Idempotency-Key} header scoped by the caller
 * ({@code ExchangeClaims}), what the client received stored and replayed byte for byte
 * (the run writes its own answer, {@code HandlerAnswers}, onto the response
 * {@link IdempotencyExchangeFilter} keeps). A {@code Mono}'s claim and run are subscribed
 * by this adapter, never by the client; each claim runs on {@code scheduler} (on a
 * blocking store), a wait is a timer. A {@code Mono}'s advice runs inside the method's
 * transaction advice: in a reactive transaction, the claim and the record are part of it
 * (on a store that joins it), and the answer is sent once it committed, dropped when it
 * rolled back; a client that goes away meanwhile stops the run, as the transaction rolls
 * back. A plain result runs on WebFlux's blocking executor with the request restored by
 * Reactor's automatic context propagation ({@code PlainResults}). A {@code Flux} fails at
 * startup. See docs/http.md.
 */
public class ReactiveHandlerMethodIdempotency implements IdempotentMethodAdapter, Ordered, DisposableBean,
		SmartInitializingSingleton, BeanClassLoaderAware {

	private static final Log logger = LogFactory.getLog(ReactiveHandlerMethodIdempotency.class);

	private final String replayedHeader;

	private final ExchangeClaims claims;

	private final Scheduler scheduler;

	private final @Nullable HandlerAnswers answers;

	/** The adapted methods with a plain result, checked once every singleton is created. */
	private final Set<String> plainMethods = new ConcurrentSkipListSet<>();

	private volatile boolean started;

	private @Nullable ClassLoader classLoader = ClassUtils.getDefaultClassLoader();

	/**
	 * Creates the adapter.
	 * @param keyHeader the request header that carries the key
	 * @param replayedHeader the response header that marks a replay
	 * @param storedHeaders the response headers stored and replayed (kept by
	 * {@link IdempotencyExchangeFilter}, which takes the same list)
	 * @param principal SpEL for the caller's identity, evaluated on the
	 * {@code ServerHttpRequest} (as the root object and as {@code #request}, the exchange
	 * as {@code #exchange}), or {@code null} for none
	 * @param principalScope whether, without a principal expression, keys are scoped by
	 * the name of the exchange's authenticated principal
	 * @param scheduler where the store is called for a {@code Mono}'s method (a bounded
	 * pool); disposed with this adapter
	 * @param beanFactory for {@code @bean} references in the principal expression, the
	 * exception handlers that answer a permanent failure and the codecs that write it
	 */
	public ReactiveHandlerMethodIdempotency(String keyHeader, String replayedHeader, Collection<String> storedHeaders,
			@Nullable String principal, boolean principalScope, Scheduler scheduler, @Nullable BeanFactory beanFactory) {
		this.replayedHeader = replayedHeader;
		this.claims = new ExchangeClaims(keyHeader, KeyScope.principal(principal), principalScope,
				(beanFactory != null) ? new BeanFactoryResolver(beanFactory) : null);
		this.scheduler = scheduler;
		this.answers = (beanFactory != null) ? new HandlerAnswers(beanFactory) : null;
	}

	@Override
	public int getOrder() {
		return 0;
	}

	private HandlerAnswers answers() {
		if (this.answers == null) {
			throw new IllegalStateException("A WebFlux handler method's answer is written with the application's "
					+ "result handlers, which this adapter reaches through a BeanFactory: none was given");
		}
		return this.answers;
	}

	@Override
	public void setBeanClassLoader(ClassLoader classLoader) {
		this.classLoader = classLoader;
	}

	@Override
	public void destroy() {
		this.scheduler.dispose();
	}

	/**
	 * Fails the start when a handler method with a plain result was adapted and Reactor's
	 * automatic context propagation is off: each of its calls would fail.
	 */
	@Override
	public void afterSingletonsInstantiated() {
		this.started = true;
		PlainResults.checkPropagation(this.plainMethods);
	}

	@Override
	public @Nullable Adaptation adapt(Method method, Class<?> targetClass, Idempotent annotation) {
		if (!AnnotatedElementUtils.hasAnnotation(targetClass, Controller.class)
				|| !AnnotatedElementUtils.hasAnnotation(method, RequestMapping.class)) {
			return null;
		}
		return new HandlerMethod(method, targetClass, annotation);
	}

	private final class HandlerMethod implements Adaptation {

		private final String name;

		private final boolean explicitKey;

		private final boolean explicitPayload;

		private final PermanentFailures permanentFailures;

		private final ExceptionHandlerMethodResolver ownExceptionHandlers;

		/** The merged {@code @ResponseStatus}, which WebFlux sets once a plain result is returned. */
		private final @Nullable Integer declaredStatus;

		private boolean plain;

		/** What a plain result's call returns to WebFlux, which writes nothing more: the answer is sent. */
		private final @Nullable Object placeholder;

		private final @Nullable String multipart;

		HandlerMethod(Method method, Class<?> targetClass, Idempotent annotation) {
			this.multipart = MultipartParameters.problem(method);
			Class<?> returned = method.getReturnType();
			this.placeholder = (returned.isPrimitive() && returned != void.class)
					? java.lang.reflect.Array.get(java.lang.reflect.Array.newInstance(returned, 1), 0) : null;
			Class<?> userClass = ClassUtils.getUserClass(targetClass);
			this.name = userClass.getName() + "." + method.getName();
			this.ownExceptionHandlers = new ExceptionHandlerMethodResolver(userClass);
			this.permanentFailures = PermanentFailures.of(List.of(annotation.recordFailureFor()));
			this.explicitKey = StringUtils.hasText(annotation.key());
			this.explicitPayload = StringUtils.hasText(annotation.payload());
			ResponseStatus status = AnnotatedElementUtils.findMergedAnnotation(method, ResponseStatus.class);
			if (status == null) {
				status = AnnotatedElementUtils.findMergedAnnotation(userClass, ResponseStatus.class);
			}
			this.declaredStatus = (status != null) ? status.code().value() : null;
		}

		@Override
		public Type resultType(Type declared) {
			ResolvableType returnType = ResolvableType.forType(declared);
			Class<?> raw = returnType.toClass();
			ResolvableType value;
			if (raw == Mono.class) {
				value = returnType.getGeneric(0);
			}
			else if (raw == void.class || ReactiveAdapterRegistry.getSharedInstance().getAdapter(raw) == null) {
				value = returnType;
				this.plain = true;
			}
			else {
				throw new IllegalArgumentException(unsupported(returnType));
			}
			if (HttpEntity.class.isAssignableFrom(value.toClass())
					&& !ResponseEntity.class.isAssignableFrom(value.toClass())) {
				throw new IllegalArgumentException("a handler method returning " + (this.plain ? "" : "Mono<")
						+ value.toClass().getName() + (this.plain ? "" : ">") + " is not supported; return a "
						+ (this.plain ? "ResponseEntity" : "Mono<ResponseEntity>"));
			}
			if (this.multipart != null && !this.explicitPayload) {
				throw new IllegalArgumentException(this.multipart);
			}
			if (this.plain) {
				requirePropagation(returnType);
			}
			return ExchangeRun.ANSWER_TYPE;
		}

		/** The request's body, or the annotation's payload, is fingerprinted. */
		@Override
		public boolean fingerprinted(boolean declared) {
			return true;
		}

		/** A recorded failure is recorded as the answer the exception handling made of it. */
		@Override
		public List<Class<? extends Throwable>> recordFailureFor(List<Class<? extends Throwable>> declared) {
			return ExchangeRun.recordFailureFor(declared);
		}

		/**
		 * A plain result finds its request through Reactor's automatic context propagation:
		 * without the library the method cannot work; with propagation off once the
		 * application started, neither (before, {@link #afterSingletonsInstantiated} checks).
		 */
		private void requirePropagation(ResolvableType returnType) {
			PlainResults.requireLibrary(returnType, classLoader);
			plainMethods.add(this.name);
			if (started) {
				PlainResults.checkPropagation(List.of(this.name));
			}
		}

		/** Why a {@code Flux} or another asynchronous result is not adapted, and what to return instead. */
		private static String unsupported(ResolvableType returnType) {
			if (Flux.class.isAssignableFrom(returnType.toClass())) {
				return "a WebFlux handler method returning a Flux is not supported: a stream has no single response to "
						+ "store and replay; return a Mono, e.g. Mono<List<T>> (flux.collectList())";
			}
			return "a WebFlux handler method returning " + returnType + " is not supported: return a Mono, or a plain "
					+ "result with blocking execution (see docs/http.md)";
		}

		@Override
		public @Nullable Object invoke(@Nullable Object key, @Nullable Object payload, Invocation invocation)
				throws Throwable {
			return this.plain ? invokeBlocking(key, payload, invocation) : invokeMono(key, payload, invocation);
		}

		private Mono<Object> invokeMono(@Nullable Object key, @Nullable Object payload, Invocation invocation) {
			return Mono.deferContextual((context) -> {
				IdempotencyExchangeFilter.Request request = IdempotencyExchangeFilter.request(context);
				ServerWebExchange exchange = (request != null) ? HandlerExchangeAdvice.of(request.exchange()) : null;
				ExchangeResponse response = (exchange != null) ? ExchangeResponse.of(exchange) : null;
				if (exchange == null || response == null) {
					return Mono.error(notRegistered());
				}
				HandlerRun first = run(exchange, response, context, invocation.isNonBlocking() ? null : scheduler);
				// this advice runs inside the method's transaction advice: the claim and the run are part
				// of its transaction, and the answer waits for its end
				boolean transactional = ReactiveTransactions.PRESENT && ReactiveTransactions.isActive(context);
				// the claim and the run are the engine's, not the client's: subscribed here, so
				// that a client that goes away neither cancels nor interrupts them (but inside a
				// transaction, which then rolls back, the run stops: nothing of it may run after);
				// waits are timers, each claim a task of the scheduler (never an event loop)
				CompletableFuture<@Nullable Object> answer = claims.claim(exchange, this.explicitKey ? key : null, this.explicitKey, this.explicitPayload ? payload : null, this.explicitPayload).contextWrite(context)
					.toFuture()
					.thenCompose((claim) -> invocation.executeAsync(claim.key(), claim.payload(),
							() -> first.run(invocation), (task) -> scheduler.schedule(task), context));
				return Mono.fromFuture(answer, true)
					.flatMap((value) -> first.ran() ? send(response, transactional ? context : null, null)
							: response.replay((HttpAnswer) value, replayedHeader))
					.onErrorResume((ex) -> first.ran(), (ex) -> {
						if (ex instanceof RecordedHttpFailure recorded) {
							return send(response, transactional ? context : null, recorded.getCause());
						}
						// not stored (a lease lost, a store that failed): the application answers it
						response.passThrough();
						return Mono.error(ex);
					})
					.doOnCancel(() -> {
						if (transactional) {
							first.cancel();
						}
					})
					.then(Mono.empty());
			});
		}

		/**
		 * Sends the run's answer (a recorded failure's included): at once outside a
		 * transaction; inside the method's
		 * transaction once it ended, when it committed (a recorded failure's whatever it did,
		 * as its record is kept either way), else dropped, for the application to answer the
		 * transaction's failure. A recorded failure is handed on, so that the transaction
		 * applies its rollback rules to it; WebFlux's answer to it then goes nowhere.
		 */
		private Mono<Void> send(ExchangeResponse response, @Nullable ContextView transaction,
				@Nullable Throwable failure) {
			if (transaction == null || !ReactiveTransactions.afterCompletion(transaction,
					(committed) -> (committed || failure != null) ? response.send().onErrorResume((ex) -> {
						// the client went away; the record stands
						logger.debug("Could not send the answer of " + this.name, ex);
						return Mono.empty();
					}) : Mono.fromRunnable(response::passThrough))) {
				return response.send();
			}
			return (failure != null) ? Mono.error(failure) : Mono.empty();
		}

		/**
		 * A plain result: the engine's synchronous path, on the thread WebFlux calls the
		 * method on, which must be a blocking one that carries the request.
		 */
		private @Nullable Object invokeBlocking(@Nullable Object key, @Nullable Object payload, Invocation invocation)
				throws Throwable {
			IdempotencyExchangeFilter.Request request = PlainResults.boundRequest(this.name);
			ServerWebExchange exchange = HandlerExchangeAdvice.of(request.exchange());
			ExchangeResponse response = (exchange != null) ? ExchangeResponse.of(exchange) : null;
			if (exchange == null || response == null) {
				throw notRegistered();
			}
			// blocking is what this thread is for: WebFlux runs the method here because it may block
			ExchangeClaims.Claim claim = Objects.requireNonNull(claims.claim(exchange, this.explicitKey ? key : null, this.explicitKey, this.explicitPayload ? payload : null, this.explicitPayload).contextWrite(request.context()).block());
			HandlerRun first = run(exchange, response, request.context(), null);
			Object answer;
			try {
				answer = ((CompletableFuture<?>) Objects.requireNonNull(invocation.execute(claim.key(), claim.payload(),
						() -> first.runBlocking(invocation)))).join();
			}
			catch (CompletionException ex) {
				Throwable failure = (ex.getCause() != null) ? ex.getCause() : ex;
				if (!(first.ran() && failure instanceof RecordedHttpFailure)) {
					if (first.ran()) {
						// not stored (a lease lost, a store that failed): the application answers it
						response.passThrough();
					}
					throw failure;
				}
				answer = null;
			}
			(first.ran() ? response.send() : response.replay((HttpAnswer) Objects.requireNonNull(answer), replayedHeader)).block();
			return this.placeholder;
		}

		private HandlerRun run(ServerWebExchange exchange, ExchangeResponse response, ContextView context,
				@Nullable Scheduler settling) {
			return new HandlerRun(exchange, response, context, this.permanentFailures, answers(), settling,
					this.declaredStatus, this.ownExceptionHandlers);
		}

		private IllegalStateException notRegistered() {
			return new IllegalStateException("@Idempotent on " + this.name + ", a WebFlux handler method, needs the "
					+ IdempotencyExchangeFilter.class.getSimpleName() + " and the "
					+ HandlerExchangeAdvice.class.getSimpleName() + " (registered by the auto-configuration): "
					+ "nothing was run or stored");
		}

	}

}
