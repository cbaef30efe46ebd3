package io.github.idempotency.web.reactive;

import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.ContextView;

import io.github.idempotency.Idempotent;
import io.github.idempotency.aop.IdempotentMethodAdapter;
import io.github.idempotency.internal.OperationDefinition;
import io.github.idempotency.internal.http.HttpFingerprint;
import io.github.idempotency.internal.http.IdempotencyKeyHeader;
import io.github.idempotency.internal.http.KeyScope;
import io.github.idempotency.internal.http.RecordedHttpFailure;
import io.github.idempotency.internal.http.StoredHeaders;
import io.github.idempotency.internal.http.StoredResponse;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.core.Ordered;
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
import org.springframework.web.method.annotation.ExceptionHandlerMethodResolver;
import org.springframework.web.reactive.HandlerResultHandler;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerAdapter;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;

/**
 * Adapts {@link Idempotent} to annotated WebFlux handler methods ({@code @RequestMapping}
 * methods of a {@code @Controller}) that return {@code Mono<T>} or
 * {@code Mono<ResponseEntity<T>>}, with the semantics of the Spring MVC adapter:
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
 * The handler's result is returned at once; everything that calls the store runs on
 * {@code scheduler}, a bounded pool, never on an event loop: the claim and the wait for a
 * duplicate in progress (on a thread of the pool), and the settlement (the handler's
 * result is handed to the engine on the pool). The engine's own threads renew leases and
 * retry settlements. The protocol stays the engine's: this adapter reads the request,
 * chooses threads and writes the response.
 * <p>
 * A method with a plain result ({@code T}, {@code ResponseEntity<T>}, {@code void}) or a
 * {@code Flux} fails at startup with a message that names what to return instead: WebFlux
 * calls a plain result on an event loop, where the store must not be called, or, with
 * blocking execution, on an executor's thread that carries nothing of the request.
 */
public class ReactiveHandlerMethodIdempotency implements IdempotentMethodAdapter, Ordered, DisposableBean {

	private static final String ANONYMOUS = "org.springframework.security.authentication.AnonymousAuthenticationToken";

	private final String keyHeader;

	private final String replayedHeader;

	private final List<String> storedHeaders;

	private final @Nullable Expression principal;

	private final boolean principalScope;

	private final Scheduler scheduler;

	private final @Nullable BeanFactory beanFactory;

	private final @Nullable BeanFactoryResolver beanResolver;

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
	 * @param scheduler where the store is called (a bounded pool); disposed with this
	 * adapter
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
	public void destroy() {
		this.scheduler.dispose();
	}

	@Override
	public @Nullable Adaptation adapt(Method method, Class<?> targetClass, Idempotent annotation) {
		if (!AnnotatedElementUtils.hasAnnotation(targetClass, Controller.class)
				|| !AnnotatedElementUtils.hasAnnotation(method, RequestMapping.class)) {
			return null;
		}
		return new HandlerMethod(targetClass, annotation);
	}

	private final class HandlerMethod implements Adaptation {

		private final boolean explicitKey;

		private final boolean explicitPayload;

		private final List<Class<? extends Throwable>> permanentFailures;

		private final ExceptionHandlerMethodResolver ownExceptionHandlers;

		private boolean responseEntity;

		HandlerMethod(Class<?> targetClass, Idempotent annotation) {
			this.ownExceptionHandlers = new ExceptionHandlerMethodResolver(ClassUtils.getUserClass(targetClass));
			this.permanentFailures = List.of(annotation.recordFailureFor());
			this.explicitKey = StringUtils.hasText(annotation.key());
			this.explicitPayload = StringUtils.hasText(annotation.payload());
		}

		@Override
		public OperationDefinition definition(OperationDefinition declared) {
			ResolvableType returnType = ResolvableType.forType(declared.resultType());
			Class<?> raw = returnType.toClass();
			if (raw != Mono.class) {
				throw new IllegalArgumentException(unsupported(returnType));
			}
			ResolvableType value = returnType.getGeneric(0);
			Type bodyType;
			if (HttpEntity.class.isAssignableFrom(value.toClass())) {
				if (!ResponseEntity.class.isAssignableFrom(value.toClass())) {
					throw new IllegalArgumentException("a handler method returning Mono<" + value.toClass().getName()
							+ "> is not supported; return a Mono<ResponseEntity>");
				}
				this.responseEntity = true;
				ResolvableType body = value.as(HttpEntity.class).getGeneric(0);
				bodyType = (body.resolve() != null) ? body.getType() : Object.class;
			}
			else {
				bodyType = (value.resolve() != null) ? value.getType() : Object.class;
			}
			Type stored = ResolvableType.forClassWithGenerics(Mono.class, ResolvableType
				.forClassWithGenerics(StoredResponse.class, ResolvableType.forType(bodyType))).getType();
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
		 * Why a result other than a {@code Mono} is not adapted, and what to return
		 * instead. A plain result is called by WebFlux either on an event loop, or, with
		 * blocking execution ({@code WebFluxConfigurer#configureBlockingExecution}, which
		 * Spring Boot turns on with virtual threads), on an executor's thread that carries
		 * no reference to the request: neither place lets this adapter read the request and
		 * call the store (docs/http.md).
		 */
		private static String unsupported(ResolvableType returnType) {
			Class<?> raw = returnType.toClass();
			if (Flux.class.isAssignableFrom(raw)) {
				return "a WebFlux handler method returning a Flux is not supported: a stream has no single response to "
						+ "store and replay; return a Mono, e.g. Mono<List<T>> (flux.collectList())";
			}
			String instead = (raw == void.class || raw == Void.class) ? "Mono<Void>"
					: "Mono<" + returnType.toString().replace("java.lang.", "") + ">";
			return "a WebFlux handler method returning " + returnType + " is not supported: return " + instead
					+ " (wrap a blocking body in Mono.fromCallable(...).subscribeOn(Schedulers.boundedElastic())). "
					+ "A plain result is not adapted on WebFlux, with or without blocking execution (virtual threads): "
					+ "the method runs either on an event loop, where the idempotency store must not be called, or on an "
					+ "executor thread that carries no reference to the request, so its key, fingerprint and principal "
					+ "cannot be read there (see docs/http.md)";
		}

		@Override
		public Object invoke(@Nullable Object key, @Nullable Object payload, Invocation invocation) {
			return Mono.deferContextual((context) -> {
				ServerWebExchange exchange = IdempotencyExchangeFilter.exchange(context);
				if (exchange == null) {
					return Mono.error(new IllegalStateException("@Idempotent on a WebFlux handler method needs the "
							+ IdempotencyExchangeFilter.class.getSimpleName() + " (registered by the auto-configuration)"));
				}
				Object rawKey = this.explicitKey ? key
						: IdempotencyKeyHeader.parse(keyHeader, exchange.getRequest().getHeaders().get(keyHeader));
				Mono<Optional<Object>> fingerprint = this.explicitPayload ? Mono.just(Optional.ofNullable(payload))
						: fingerprint(exchange).map(Optional::of);
				return Mono.zip(identity(exchange), fingerprint)
					// from here on the store is called: on the scheduler, never on an event loop
					.publishOn(scheduler)
					.flatMap((request) -> execute(KeyScope.scoped(rawKey, request.getT1().orElse(null)),
							request.getT2().orElse(null), invocation, exchange, context));
			});
		}

		private Mono<Object> execute(@Nullable Object key, @Nullable Object payload, Invocation invocation,
				ServerWebExchange exchange, ContextView context) {
			FirstRun first = new FirstRun(exchange, context);
			Object returned;
			try {
				returned = invocation.execute(key, payload, () -> first.run(invocation));
			}
			catch (Throwable ex) {
				return Mono.error(ex);
			}
			if (!(returned instanceof Mono<?> result)) {
				return Mono.error(new IllegalStateException("the engine answered " + returned + " instead of a Mono"));
			}
			return result.flatMap((value) -> (first.stored != null && value == first.stored)
					? Mono.justOrEmpty(first.result) : replay((StoredResponse<?>) value, exchange))
				.onErrorResume((ex) -> Mono.error(answerTo(ex, first)));
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

		private Mono<Object> replay(StoredResponse<?> stored, ServerWebExchange exchange) {
			HttpHeaders headers = new HttpHeaders();
			stored.headers().forEach(headers::put);
			if (this.responseEntity) {
				headers.set(replayedHeader, "true");
				return Mono.just(ResponseEntity.status(stored.status()).headers(headers).body(stored.body()));
			}
			ServerHttpResponse response = exchange.getResponse();
			response.getHeaders().set(replayedHeader, "true");
			headers.forEach((name, values) -> response.getHeaders().put(name, values));
			response.setStatusCode(HttpStatusCode.valueOf(stored.status()));
			return Mono.justOrEmpty(stored.body());
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
			return new StoredResponse<>((status != null) ? status.value() : 200, headers,
					this.responseEntity ? null : result);
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
					.<StoredResponse<?>>map((value) -> {
						this.result = value.orElse(null);
						StoredResponse<?> response = store(this.result, this.exchange);
						this.stored = response;
						return response;
					})
					.onErrorResume((ex) -> isPermanent(ex) ? recorded(ex) : Mono.error(ex))
					// the engine settles where the result arrives: on the scheduler, never on an event loop
					.publishOn(scheduler);
			}

			private Mono<StoredResponse<?>> recorded(Throwable ex) {
				return capture(ex).map(Optional::of).defaultIfEmpty(Optional.empty()).flatMap((answer) -> {
					CapturedAnswer captured = answer.orElse(null);
					this.captured = captured;
					RecordedHttpFailure.Answer stored = (captured != null) ? captured.toAnswer(storedHeaders) : null;
					int status = (captured != null) ? captured.status() : RecordedHttpFailure.statusOf(ex);
					RecordedHttpFailure failure = new RecordedHttpFailure(status, ex, stored);
					this.failure = failure;
					return Mono.error(failure);
				});
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

}
