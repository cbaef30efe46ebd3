package io.github.idempotency.web.reactive;

import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
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
import io.github.idempotency.internal.http.HttpAnswer;
import io.github.idempotency.internal.http.HttpFingerprint;
import io.github.idempotency.internal.http.IdempotencyKeyHeader;
import io.github.idempotency.internal.http.KeyScope;
import io.github.idempotency.internal.http.RecordedHttpFailure;
import io.github.idempotency.internal.http.StoredHeaders;
import io.github.idempotency.internal.http.StoredResponse;
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
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Controller;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.method.annotation.ExceptionHandlerMethodResolver;
import org.springframework.web.reactive.HandlerResultHandler;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerAdapter;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;

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
 * of the exchange's authenticated principal unless principal scoping is off;</li>
 * <li>the request's method, path, query and form parameters and body as received are
 * fingerprinted unless the annotation names a payload;</li>
 * <li>what is stored is a {@code StoredResponse}, replayed with the
 * {@code Idempotent-Replayed} header; a permanent failure is stored with the answer the
 * application's exception handling gave it (a {@code @ControllerAdvice} exception
 * handler, else the error handling), written once, and replayed as that answer.</li>
 * </ul>
 * A {@code Mono}'s method is called on the request's thread and its {@code Mono} returned
 * at once; everything that calls the store runs on {@code scheduler}, a bounded pool,
 * never on an event loop: the claim and the wait for a duplicate in progress (on a thread
 * of the pool), and the settlement (the handler's result is handed to the engine on the
 * pool). The engine's own threads renew leases and retry settlements. The protocol stays
 * the engine's: this adapter reads the request, chooses threads and writes the response.
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
	}

	@Override
	public int getOrder() {
		return 0;
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

		private boolean responseEntity;

		private boolean plain;

		HandlerMethod(Method method, Class<?> targetClass, Idempotent annotation) {
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
			Type bodyType;
			if (HttpEntity.class.isAssignableFrom(value.toClass())) {
				if (!ResponseEntity.class.isAssignableFrom(value.toClass())) {
					throw new IllegalArgumentException("a handler method returning "
							+ (this.plain ? "" : "Mono<") + value.toClass().getName() + (this.plain ? "" : ">")
							+ " is not supported; return a " + (this.plain ? "ResponseEntity" : "Mono<ResponseEntity>"));
				}
				this.responseEntity = true;
				ResolvableType body = value.as(HttpEntity.class).getGeneric(0);
				bodyType = (body.resolve() != null) ? body.getType() : Object.class;
			}
			else if (value.toClass() == void.class) {
				bodyType = Void.class;
			}
			else {
				bodyType = (value.resolve() != null) ? value.getType() : Object.class;
			}
			ResolvableType storedType = ResolvableType.forClassWithGenerics(StoredResponse.class,
					ResolvableType.forType(bodyType));
			if (this.plain) {
				requirePropagation(returnType);
			}
			Type stored = this.plain ? storedType.getType()
					: ResolvableType.forClassWithGenerics(Mono.class, storedType).getType();
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
				if (request == null) {
					return Mono.error(new IllegalStateException("@Idempotent on a WebFlux handler method needs the "
							+ IdempotencyExchangeFilter.class.getSimpleName() + " (registered by the auto-configuration)"));
				}
				ServerWebExchange exchange = request.exchange();
				// the run is the engine's, not the client's: subscribed here, so that a client
				// that goes away (a cancelled subscription) neither cancels nor interrupts it
				CompletableFuture<@Nullable Object> answer = new CompletableFuture<>();
				claim(exchange, key, payload)
					// from here on the store is called: on the scheduler, never on an event loop
					.publishOn(scheduler)
					.flatMap((claim) -> execute(claim, invocation, exchange, context))
					.contextWrite(context)
					.subscribe(answer::complete, answer::completeExceptionally, () -> answer.complete(null));
				return Mono.fromFuture(answer, true);
			});
		}

		private Mono<Object> execute(Claim claim, Invocation invocation, ServerWebExchange exchange,
				ContextView context) {
			FirstRun first = new FirstRun(exchange, context);
			Object returned;
			try {
				returned = invocation.execute(claim.key(), claim.payload(), () -> first.run(invocation));
			}
			catch (Throwable ex) {
				return Mono.error(ex);
			}
			if (!(returned instanceof Mono<?> result)) {
				return Mono.error(new IllegalStateException("the engine answered " + returned + " instead of a Mono"));
			}
			return result.flatMap((value) -> (first.stored != null && value == first.stored)
					? Mono.justOrEmpty(first.result) : Mono.justOrEmpty(replay((StoredResponse<?>) value, exchange)))
				.onErrorResume((ex) -> Mono.error(answerTo(ex, first)));
		}

		/**
		 * A plain result: the engine's synchronous path, on the thread WebFlux calls the
		 * method on, which must be a blocking one that carries the request.
		 */
		private @Nullable Object invokeBlocking(@Nullable Object key, @Nullable Object payload, Invocation invocation)
				throws Throwable {
			IdempotencyExchangeFilter.Request request = boundRequest();
			ServerWebExchange exchange = request.exchange();
			// blocking is what this thread is for: WebFlux runs the method here because it may block
			Claim claim = claim(exchange, key, payload).contextWrite(request.context()).block();
			FirstRun first = new FirstRun(exchange, request.context());
			Object returned;
			try {
				returned = invocation.execute(claim.key(), claim.payload(), () -> first.runBlocking(invocation));
			}
			catch (Throwable ex) {
				throw answerTo(ex, first);
			}
			return (first.stored != null && returned == first.stored) ? first.result
					: replay((StoredResponse<?>) returned, exchange);
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

		private Throwable answerTo(Throwable ex, FirstRun first) {
			if (ex instanceof RecordedHttpFailure recorded && recorded == first.failure && recorded.getCause() != null) {
				Throwable original = recorded.getCause();
				for (Throwable suppressed : recorded.getSuppressed()) {
					original.addSuppressed(suppressed);
				}
				return (first.captured != null) ? first.captured : original;
			}
			return ex;
		}

		/** A replay: a {@code ResponseEntity}, or the body with the response's status and headers set. */
		private @Nullable Object replay(StoredResponse<?> stored, ServerWebExchange exchange) {
			HttpHeaders headers = new HttpHeaders();
			stored.headers().forEach(headers::put);
			if (this.responseEntity) {
				headers.set(replayedHeader, "true");
				return ResponseEntity.status(stored.status()).headers(headers).body(stored.body());
			}
			ServerHttpResponse response = exchange.getResponse();
			response.getHeaders().set(replayedHeader, "true");
			headers.forEach((name, values) -> response.getHeaders().put(name, values));
			response.setStatusCode(HttpStatusCode.valueOf(stored.status()));
			return stored.body();
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

		private StoredResponse<?> store(@Nullable Object result, ServerWebExchange exchange) {
			Map<String, List<String>> headers = new LinkedHashMap<>();
			if (result instanceof ResponseEntity<?> entity) {
				copy(entity.getHeaders(), headers);
				return new StoredResponse<>(entity.getStatusCode().value(), headers, entity.getBody());
			}
			ServerHttpResponse response = exchange.getResponse();
			copy(response.getHeaders(), headers);
			HttpStatusCode status = response.getStatusCode();
			// WebFlux sets a plain result's @ResponseStatus once the method returned: it is the status
			int code = (this.plain && this.declaredStatus != null) ? this.declaredStatus
					: (status != null) ? status.value() : 200;
			return new StoredResponse<>(code, headers, this.responseEntity ? null : result);
		}

		private void copy(HttpHeaders from, Map<String, List<String>> to) {
			for (String name : storedHeaders) {
				List<String> values = from.get(name);
				if (values != null && !values.isEmpty()) {
					to.put(name, List.copyOf(values));
				}
			}
		}

		private boolean isPermanent(Throwable ex) {
			for (Class<? extends Throwable> type : this.permanentFailures) {
				if (type.isInstance(ex)) {
					return true;
				}
			}
			return false;
		}

		/** One run of the handler method, as the engine calls it when the key is claimed. */
		private final class FirstRun {

			private final ServerWebExchange exchange;

			private final ContextView context;

			private volatile @Nullable Object result;

			private volatile @Nullable StoredResponse<?> stored;

			private volatile @Nullable RecordedHttpFailure failure;

			private volatile @Nullable CapturedAnswer captured;

			FirstRun(ServerWebExchange exchange, ContextView context) {
				this.exchange = exchange;
				this.context = context;
			}

			/** A {@code Mono}'s run: the engine settles it when the {@code Mono} answers. */
			Mono<StoredResponse<?>> run(Invocation invocation) {
				Mono<?> handler;
				try {
					Object returned = invocation.proceed();
					handler = (returned != null) ? (Mono<?>) returned
							: Mono.error(new IllegalStateException("the handler method returned null, not a Mono"));
				}
				catch (Throwable ex) {
					handler = Mono.error(ex);
				}
				return handler
					// the handler's result sees the request's context (the exchange, the security context)
					.contextWrite(this.context)
					.map(Optional::<Object>of)
					.defaultIfEmpty(Optional.empty())
					.<StoredResponse<?>>map((value) -> completed(value.orElse(null)))
					.onErrorResume((ex) -> isPermanent(ex) ? capture(ex).map(Optional::of)
						.defaultIfEmpty(Optional.empty())
						.flatMap((answer) -> Mono.error(recorded(ex, answer.orElse(null)))) : Mono.error(ex))
					// the engine settles where the result arrives: on the scheduler, never on an event loop
					.publishOn(scheduler);
			}

			/** A plain result's run, on the calling thread. */
			StoredResponse<?> runBlocking(Invocation invocation) throws Throwable {
				Object value;
				try {
					value = invocation.proceed();
				}
				catch (Throwable ex) {
					if (!isPermanent(ex)) {
						throw ex;
					}
					throw recorded(ex, capture(ex).contextWrite(this.context).block());
				}
				return completed(value);
			}

			private StoredResponse<?> completed(@Nullable Object value) {
				this.result = value;
				StoredResponse<?> response = store(value, this.exchange);
				this.stored = response;
				return response;
			}

			private RecordedHttpFailure recorded(Throwable ex, @Nullable CapturedAnswer captured) {
				this.captured = captured;
				HttpAnswer stored = (captured != null) ? captured.toAnswer(storedHeaders) : null;
				int status = (captured != null) ? captured.status() : RecordedHttpFailure.statusOf(ex);
				RecordedHttpFailure failure = new RecordedHttpFailure(status, ex, stored);
				this.failure = failure;
				return failure;
			}

			/**
			 * What the application's exception handling answers to a permanent failure,
			 * as the {@code DispatcherHandler} would ask it: the {@code @ControllerAdvice}
			 * exception handlers, their result written by the result handlers, else the
			 * {@code WebExceptionHandler}s (Spring Boot's error page), all written to a
			 * captured response; empty when nothing answers, and when the controller has
			 * an {@code @ExceptionHandler} of its own for the failure (it answers the
			 * first request; a replay is a problem with the failure's status).
			 */
			private Mono<CapturedAnswer> capture(Throwable failure) {
				if (beanFactory == null || ownExceptionHandlers.resolveMethodByThrowable(failure) != null) {
					// the controller's own @ExceptionHandler answers, outside this adapter's reach
					return Mono.empty();
				}
				RequestMappingHandlerAdapter handlers = beanFactory.getBeanProvider(RequestMappingHandlerAdapter.class)
					.getIfAvailable();
				List<HandlerResultHandler> resultHandlers = beanFactory.getBeanProvider(HandlerResultHandler.class)
					.orderedStream()
					.toList();
				List<WebExceptionHandler> errorHandlers = beanFactory.getBeanProvider(WebExceptionHandler.class)
					.orderedStream()
					.toList();
				CapturingResponse response = new CapturingResponse();
				ServerWebExchange capturing = this.exchange.mutate().response(response).build();
				Mono<Void> handled = (handlers != null) ? handlers.handleError(capturing, failure)
					.flatMap((result) -> resultHandlers.stream()
						.filter((handler) -> handler.supports(result))
						.findFirst()
						.map((handler) -> handler.handleResult(capturing, result))
						.orElseGet(() -> Mono.error(failure))) : Mono.error(failure);
				for (WebExceptionHandler errorHandler : errorHandlers) {
					handled = handled.onErrorResume((ex) -> errorHandler.handle(capturing, ex));
				}
				return handled.then(Mono.fromSupplier(response::answer)).onErrorResume((other) -> {
					if (other != failure) {
						failure.addSuppressed(other);
					}
					return Mono.empty();
				});
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
