package io.github.idempotency.web.reactive;

import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentSkipListSet;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.ContextView;

import io.github.idempotency.Idempotent;
import io.github.idempotency.aop.IdempotentMethodAdapter;
import io.github.idempotency.internal.OperationDefinition;
import io.github.idempotency.internal.http.ExchangeRun;
import io.github.idempotency.internal.http.HttpAnswer;
import io.github.idempotency.internal.http.HttpFingerprint;
import io.github.idempotency.internal.http.IdempotencyKeyHeader;
import io.github.idempotency.internal.http.KeyScope;
import io.github.idempotency.internal.http.MultipartParameters;
import io.github.idempotency.internal.http.RecordedHttpFailure;
import io.github.idempotency.internal.http.StoredHeaders;
import org.springframework.beans.factory.BeanClassLoaderAware;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.core.Ordered;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
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
 * <ul>
 * <li>the key is the {@code Idempotency-Key} request header (a structured-field string, or
 * a bare token) unless the annotation names one, scoped by the caller's identity: the
 * principal expression's value when one is set (evaluated on the
 * {@code ServerHttpRequest}, also {@code #request}, and {@code #exchange}), else the name
 * of the authenticated principal of the exchange the method is called with, unless
 * principal scoping is off;</li>
 * <li>the request's method, path, query and form parameters and body as received are
 * fingerprinted unless the annotation names a payload;</li>
 * <li>what is stored is what the client received ({@code HttpAnswer}): the run writes its
 * answer itself, with WebFlux's result handlers (a permanent failure's with the
 * {@code @ControllerAdvice} exception handlers, else the error handling), onto the
 * response that {@link IdempotencyExchangeFilter} keeps until the run is settled; a replay
 * is that answer again, byte for byte, with the {@code Idempotent-Replayed} header.</li>
 * </ul>
 * A {@code Mono}'s method is called on the request's thread and its {@code Mono} returned
 * at once; the claim and the run are subscribed by this adapter, so that a client that
 * goes away neither cancels nor interrupts them. Every store call runs on
 * {@code scheduler}, a bounded pool, never on an event loop, and a wait for a duplicate in
 * progress is a timer, which holds no thread. The engine's own threads renew leases and
 * retry settlements. The protocol stays the engine's: this adapter reads the request,
 * chooses threads and writes the response.
 * <p>
 * A method with a plain result runs on the thread WebFlux calls it on, which must be a
 * thread of its blocking executor ({@code WebFluxConfigurer#configureBlockingExecution};
 * Spring Boot configures one with virtual threads): there the engine's synchronous path
 * runs, the request read from the {@code ThreadLocal} that Reactor's automatic context
 * propagation restores ({@code io.micrometer:context-propagation} on the class path and
 * {@code Hooks.enableAutomaticContextPropagation()}, Spring Boot's
 * {@code spring.reactor.context-propagation=auto}). Without the library the start fails;
 * with automatic propagation off once every singleton is created, the start fails; a call
 * on a non-blocking thread (an event loop: blocking execution is off) or without its
 * request bound fails with an {@code IllegalStateException} that names what to turn on,
 * before anything runs or is stored. A {@code Flux} fails at startup.
 */
public class ReactiveHandlerMethodIdempotency implements IdempotentMethodAdapter, Ordered, DisposableBean,
		SmartInitializingSingleton, BeanClassLoaderAware {

	private static final String ANONYMOUS = "org.springframework.security.authentication.AnonymousAuthenticationToken";

	private static final String CONTEXT_REGISTRY = "io.micrometer.context.ContextRegistry";

	private static final String PROPAGATION = "Reactor's automatic context propagation (on Spring Boot "
			+ "spring.reactor.context-propagation=auto, else Hooks.enableAutomaticContextPropagation() before the "
			+ "application starts)";

	private static final String BLOCKING_EXECUTION = "WebFlux blocking execution "
			+ "(WebFluxConfigurer#configureBlockingExecution with an executor, or on Spring Boot with Java 21+ "
			+ "spring.threads.virtual.enabled=true)";

	private final String keyHeader;

	private final String replayedHeader;

	private final List<String> storedHeaders;

	private final @Nullable Expression principal;

	private final boolean principalScope;

	private final Scheduler scheduler;

	private final @Nullable BeanFactory beanFactory;

	private final @Nullable BeanFactoryResolver beanResolver;

	private final @Nullable HandlerAnswers answers;

	/** The adapted methods with a plain result, checked once every singleton is created. */
	private final Set<String> plainMethods = new ConcurrentSkipListSet<>();

	private volatile boolean started;

	private @Nullable ClassLoader classLoader = ClassUtils.getDefaultClassLoader();

	/**
	 * Creates the adapter.
	 * @param keyHeader the request header that carries the key
	 * @param replayedHeader the response header that marks a replay
	 * @param storedHeaders the response headers stored and replayed
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
		this.keyHeader = keyHeader;
		this.replayedHeader = replayedHeader;
		this.storedHeaders = StoredHeaders.allowed(storedHeaders);
		this.principal = KeyScope.principal(principal);
		this.principalScope = principalScope;
		this.scheduler = scheduler;
		this.beanFactory = beanFactory;
		this.beanResolver = (beanFactory != null) ? new BeanFactoryResolver(beanFactory) : null;
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
		checkPropagation(this.plainMethods);
	}

	private static void checkPropagation(Collection<String> methods) {
		if (!methods.isEmpty() && !Hooks.isAutomaticContextPropagationEnabled()) {
			throw new IllegalStateException("@Idempotent on " + String.join(", ", methods)
					+ ", WebFlux handler methods with a plain result, needs " + PROPAGATION
					+ ", which is off: turn it on, or return a Mono (see docs/http.md)");
		}
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

		private final List<Class<? extends Throwable>> permanentFailures;

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
			this.permanentFailures = List.of(annotation.recordFailureFor());
			this.explicitKey = StringUtils.hasText(annotation.key());
			this.explicitPayload = StringUtils.hasText(annotation.payload());
			ResponseStatus status = AnnotatedElementUtils.findMergedAnnotation(method, ResponseStatus.class);
			if (status == null) {
				status = AnnotatedElementUtils.findMergedAnnotation(userClass, ResponseStatus.class);
			}
			this.declaredStatus = (status != null) ? status.code().value() : null;
		}

		@Override
		public OperationDefinition definition(OperationDefinition declared) {
			ResolvableType returnType = ResolvableType.forType(declared.resultType());
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
			Type stored = ResolvableType.forClassWithGenerics(CompletableFuture.class, HttpAnswer.class).getType();
			List<Class<? extends Throwable>> failures = declared.recordFailureFor().isEmpty() ? List.of()
					: List.of(RecordedHttpFailure.class);
			return OperationDefinition.of(declared.workflow(), stored)
				.leaseTtl(declared.leaseTtl())
				.retention(declared.retention())
				.onInProgress(declared.onInProgress())
				.recordFailureFor(failures)
				.build();
		}

		/**
		 * A plain result finds its request through Reactor's automatic context propagation:
		 * without the library the method cannot work; with propagation off once the
		 * application started, neither (before, {@link #afterSingletonsInstantiated} checks).
		 */
		private void requirePropagation(ResolvableType returnType) {
			if (!ClassUtils.isPresent(CONTEXT_REGISTRY, classLoader)) {
				throw new IllegalArgumentException("a WebFlux handler method returning " + returnType
						+ " needs io.micrometer:context-propagation on the class path, " + PROPAGATION + " and "
						+ BLOCKING_EXECUTION + ", or return a Mono (see docs/http.md)");
			}
			plainMethods.add(this.name);
			if (started) {
				checkPropagation(List.of(this.name));
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
				FirstRun first = new FirstRun(exchange, response, context);
				// the claim and the run are the engine's, not the client's: subscribed here, so
				// that a client that goes away neither cancels nor interrupts them; waits are
				// timers, each claim a task of the scheduler (never an event loop)
				CompletableFuture<@Nullable Object> answer = claim(exchange, key, payload).contextWrite(context)
					.toFuture()
					.thenCompose((claim) -> invocation.executeAsync(claim.key(), claim.payload(),
							() -> first.run(invocation), (task) -> scheduler.schedule(task)));
				return Mono.fromFuture(answer, true)
					.flatMap((value) -> first.ran ? response.send()
							: response.replay((HttpAnswer) value, replayedHeader))
					.onErrorResume((ex) -> first.ran, (ex) -> {
						if (ex instanceof RecordedHttpFailure) {
							return response.send();
						}
						// not stored (a lease lost, a store that failed): the application answers it
						response.passThrough();
						return Mono.error(ex);
					})
					.then(Mono.empty());
			});
		}

		/**
		 * A plain result: the engine's synchronous path, on the thread WebFlux calls the
		 * method on, which must be a blocking one that carries the request.
		 */
		private @Nullable Object invokeBlocking(@Nullable Object key, @Nullable Object payload, Invocation invocation)
				throws Throwable {
			IdempotencyExchangeFilter.Request request = boundRequest();
			ServerWebExchange exchange = HandlerExchangeAdvice.of(request.exchange());
			ExchangeResponse response = (exchange != null) ? ExchangeResponse.of(exchange) : null;
			if (exchange == null || response == null) {
				throw notRegistered();
			}
			// blocking is what this thread is for: WebFlux runs the method here because it may block
			Claim claim = claim(exchange, key, payload).contextWrite(request.context()).block();
			FirstRun first = new FirstRun(exchange, response, request.context());
			Object answer;
			try {
				answer = ((CompletableFuture<?>) invocation.execute(claim.key(), claim.payload(),
						() -> first.runBlocking(invocation))).join();
			}
			catch (CompletionException ex) {
				Throwable failure = (ex.getCause() != null) ? ex.getCause() : ex;
				if (!(first.ran && failure instanceof RecordedHttpFailure)) {
					if (first.ran) {
						// not stored (a lease lost, a store that failed): the application answers it
						response.passThrough();
					}
					throw failure;
				}
				answer = null;
			}
			(first.ran ? response.send() : response.replay((HttpAnswer) answer, replayedHeader)).block();
			return this.placeholder;
		}

		private IllegalStateException notRegistered() {
			return new IllegalStateException("@Idempotent on " + this.name + ", a WebFlux handler method, needs the "
					+ IdempotencyExchangeFilter.class.getSimpleName() + " and the "
					+ HandlerExchangeAdvice.class.getSimpleName() + " (registered by the auto-configuration): "
					+ "nothing was run or stored");
		}

		/**
		 * The request a plain result's method is called for, on a thread that may block.
		 * @throws IllegalStateException naming what to turn on, before anything runs
		 */
		private IdempotencyExchangeFilter.Request boundRequest() {
			IdempotencyExchangeFilter.Request request = IdempotencyExchangeFilter.boundRequest();
			boolean nonBlocking = Schedulers.isInNonBlockingThread();
			if (!nonBlocking && request != null) {
				return request;
			}
			String thread = Thread.currentThread().getName();
			StringBuilder message = new StringBuilder("@Idempotent on ").append(this.name)
				.append(", a WebFlux handler method with a plain result, cannot run on thread ")
				.append(thread)
				.append("; nothing was run or stored. ");
			if (nonBlocking) {
				message.append("It is a non-blocking thread (an event loop), where the idempotency store must not be "
						+ "called: turn on ")
					.append(BLOCKING_EXECUTION)
					.append(", so that WebFlux calls the method on a thread that may block");
				if (request == null) {
					message.append(", and ").append(PROPAGATION);
				}
			}
			else {
				message.append("The request is not bound to it: turn on ")
					.append(PROPAGATION)
					.append(", with io.micrometer:context-propagation on the class path and the ")
					.append(IdempotencyExchangeFilter.class.getSimpleName())
					.append(" registered (the auto-configuration registers it)");
			}
			throw new IllegalStateException(message.append(" (see docs/http.md)").toString());
		}

		/** The scoped key and the fingerprint of a request. */
		private Mono<Claim> claim(ServerWebExchange exchange, @Nullable Object key, @Nullable Object payload) {
			Object rawKey = this.explicitKey ? key
					: IdempotencyKeyHeader.parse(keyHeader, exchange.getRequest().getHeaders().get(keyHeader));
			Mono<Optional<Object>> fingerprint = this.explicitPayload ? Mono.just(Optional.ofNullable(payload))
					: fingerprint(exchange).map(Optional::of);
			return Mono.zip(identity(exchange), fingerprint,
					(identity, fingerprinted) -> new Claim(KeyScope.scoped(rawKey, identity.orElse(null)),
							fingerprinted.orElse(null)));
		}

		/** The caller's identity: the expression's value, else the authenticated principal's name. */
		private Mono<Optional<Object>> identity(ServerWebExchange exchange) {
			if (principal != null) {
				StandardEvaluationContext evaluation = new StandardEvaluationContext(exchange.getRequest());
				evaluation.setVariable("request", exchange.getRequest());
				evaluation.setVariable("exchange", exchange);
				if (beanResolver != null) {
					evaluation.setBeanResolver(beanResolver);
				}
				return Mono.just(Optional.ofNullable(principal.getValue(evaluation)));
			}
			if (!principalScope) {
				return Mono.just(Optional.empty());
			}
			return exchange.getPrincipal()
				.filter((user) -> !ANONYMOUS.equals(user.getClass().getName()))
				.map((user) -> Optional.<Object>of(user.getName()))
				.defaultIfEmpty(Optional.empty());
		}

		private boolean isPermanent(Throwable ex) {
			for (Class<? extends Throwable> type : this.permanentFailures) {
				if (type.isInstance(ex)) {
					return true;
				}
			}
			return false;
		}

		/** The run of the method, when a call claimed the key: it writes its own answer, kept until settled. */
		private final class FirstRun {

			private final ServerWebExchange exchange;

			private final ExchangeResponse response;

			private final ContextView context;

			private volatile boolean ran;

			FirstRun(ServerWebExchange exchange, ExchangeResponse response, ContextView context) {
				this.exchange = exchange;
				this.response = response;
				this.context = context;
			}

			/** A {@code Mono}'s run: its value or failure written, then the run settled with it. */
			CompletableFuture<HttpAnswer> run(Invocation invocation) {
				ExchangeRun run = this.response.capture(permanentFailures);
				this.ran = true;
				Mono<?> handler;
				try {
					Object returned = invocation.proceed();
					handler = (returned != null) ? (Mono<?>) returned
							: Mono.error(new IllegalStateException("the handler method returned null, not a Mono"));
				}
				catch (Throwable ex) {
					handler = Mono.error(ex);
				}
				handler.map(Optional::<Object>of)
					.defaultIfEmpty(Optional.empty())
					// the method's failure, not the writing's
					.onErrorResume((ex) -> failed(run, ex).then(Mono.empty()))
					.flatMap((value) -> answers().value(this.exchange, Mono.justOrEmpty(value.orElse(null))))
					// the handler's result sees the request's context (the exchange, the security context)
					.contextWrite(this.context)
					// the engine settles where the answer is written: on the scheduler, never on an event loop
					.publishOn(scheduler)
					.subscribe(null, (ex) -> answered(run, ex), () -> run.answered(this.response.captured()));
				return run.answer();
			}

			/** A plain result's run, on the calling thread. */
			CompletableFuture<HttpAnswer> runBlocking(Invocation invocation) {
				ExchangeRun run = this.response.capture(permanentFailures);
				this.ran = true;
				Mono<Void> written;
				try {
					Object value = invocation.proceed();
					if (declaredStatus != null) {
						// WebFlux sets it once the method returned: the answer is written before
						this.exchange.getResponse().setStatusCode(HttpStatusCode.valueOf(declaredStatus));
					}
					written = answers().value(this.exchange, value);
				}
				catch (Throwable ex) {
					written = failed(run, ex);
				}
				try {
					written.contextWrite(this.context).block();
					run.answered(this.response.captured());
				}
				catch (RuntimeException ex) {
					answered(run, ex);
				}
				return run.answer();
			}

			/** The method failed: a permanent failure's answer is written; any other is the application's to answer. */
			private Mono<Void> failed(ExchangeRun run, Throwable failure) {
				run.threw(failure);
				if (isPermanent(failure)) {
					return answers().failure(this.exchange, failure, ownExceptionHandlers);
				}
				this.response.passThrough();
				return Mono.empty();
			}

			/**
			 * Writing the answer of a method that returned failed: the operation ran, so the
			 * run is settled with the server error its client gets.
			 */
			private void answered(ExchangeRun run, Throwable failure) {
				this.response.failed();
				run.answered(this.response.captured());
			}

		}

		/** The request's fingerprint: method, path, query, form, and the body's digest. */
		private Mono<Object> fingerprint(ServerWebExchange exchange) {
			ServerHttpRequest request = exchange.getRequest();
			String method = request.getMethod().name();
			String path = request.getPath().value();
			String query = request.getURI().getRawQuery();
			if (HttpFingerprint.isForm(request.getHeaders().getFirst(HttpHeaders.CONTENT_TYPE))) {
				// the form is the body, compared as its parameters
				return exchange.getFormData()
					.map((form) -> HttpFingerprint.of(method, path, query, new TreeMap<>(form), null));
			}
			DigestedRequest digested = digested(request);
			if (digested == null) {
				return Mono.just(HttpFingerprint.of(method, path, query, Map.of(), null));
			}
			return digested.digest().map((digest) -> HttpFingerprint.of(method, path, query, Map.of(), digest));
		}

		private static @Nullable DigestedRequest digested(ServerHttpRequest request) {
			ServerHttpRequest current = request;
			while (current instanceof ServerHttpRequestDecorator decorator) {
				if (decorator instanceof DigestedRequest digested) {
					return digested;
				}
				current = decorator.getDelegate();
			}
			return null;
		}

	}

	/**
	 * What a request claims: its scoped key and its fingerprint.
	 * @param key the key, scoped by the caller's identity
	 * @param payload the fingerprint, or the annotation's payload
	 */
	private record Claim(@Nullable Object key, @Nullable Object payload) {
	}

}
