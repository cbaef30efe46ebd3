package io.github.idempotency.web;

import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.security.Principal;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.Idempotent;
import io.github.idempotency.aop.IdempotentMethodAdapter;
import io.github.idempotency.internal.PermanentFailures;
import io.github.idempotency.internal.http.ExchangeRun;
import io.github.idempotency.internal.http.HttpAnswer;
import io.github.idempotency.internal.http.IdempotencyKeyHeader;
import io.github.idempotency.internal.http.KeyScope;
import io.github.idempotency.internal.http.MultipartParameters;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.core.Ordered;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.http.HttpEntity;
import org.springframework.stereotype.Controller;
import org.springframework.util.StringUtils;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;

/**
 * Adapts {@link Idempotent} to Spring MVC handler methods ({@code @RequestMapping}
 * methods of a {@code @Controller}), as the IETF draft "The Idempotency-Key HTTP Header
 * Field" describes:
 * <ul>
 * <li>the key is the {@code Idempotency-Key} request header (a structured-field string, or
 * a bare token) unless the annotation names one, scoped by the caller's identity: the
 * principal expression's value when one is set, else the authenticated principal's name
 * unless principal scoping is off, read when the method is called;</li>
 * <li>the request's method, path, query and form parameters and body as received are
 * fingerprinted unless the annotation names a payload;</li>
 * <li>what is stored is what the client received ({@link HttpAnswer}): the status, the
 * allow-listed headers and the body's bytes, whoever wrote them, kept by
 * {@link IdempotencyResponseFilter}; a permanent failure is stored with the answer the
 * application's exception handling wrote; a replay is that answer again, byte for byte,
 * marked with the {@code Idempotent-Replayed} header ({@link CapturedFailureResolver}).</li>
 * </ul>
 * The claim is made when the method is called, outside its transaction (the advice of
 * handler methods runs first), and settled once the response is complete, after the
 * transaction ended. A streaming or asynchronous result fails the start.
 */
public class HandlerMethodIdempotency implements IdempotentMethodAdapter, Ordered {

	private final String keyHeader;

	private final String replayedHeader;

	private final @Nullable Expression principal;

	private final boolean principalScope;

	private final @Nullable BeanFactoryResolver beanResolver;

	/**
	 * Creates the adapter.
	 * @param keyHeader the request header that carries the key
	 * @param replayedHeader the response header that marks a replay
	 * @param storedHeaders the response headers stored and replayed (kept by
	 * {@link IdempotencyResponseFilter}, which takes the same list)
	 * @param principal SpEL for the caller's identity, evaluated on the request (as the
	 * root object and as {@code #request}), or {@code null} for none
	 * @param principalScope whether, without a principal expression, keys are scoped by
	 * the name of the request's authenticated principal ({@code getUserPrincipal()})
	 * @param beanFactory for {@code @bean} references in the principal expression
	 */
	public HandlerMethodIdempotency(String keyHeader, String replayedHeader, Collection<String> storedHeaders,
			@Nullable String principal, boolean principalScope, @Nullable BeanFactory beanFactory) {
		this.keyHeader = keyHeader;
		this.replayedHeader = replayedHeader;
		this.principal = KeyScope.principal(principal);
		this.principalScope = principalScope;
		this.beanResolver = (beanFactory != null) ? new BeanFactoryResolver(beanFactory) : null;
	}

	@Override
	public int getOrder() {
		return 0;
	}

	@Override
	public @Nullable Adaptation adapt(Method method, Class<?> targetClass, Idempotent annotation) {
		if (!AnnotatedElementUtils.hasAnnotation(targetClass, Controller.class)
				|| !AnnotatedElementUtils.hasAnnotation(method, RequestMapping.class)) {
			return null;
		}
		return new HandlerMethod(method, annotation);
	}

	private final class HandlerMethod implements Adaptation {

		private final boolean explicitKey;

		private final boolean explicitPayload;

		private final PermanentFailures permanentFailures;

		private final @Nullable String multipart;

		HandlerMethod(Method method, Idempotent annotation) {
			this.multipart = MultipartParameters.problem(method);
			this.permanentFailures = PermanentFailures.of(List.of(annotation.recordFailureFor()));
			this.explicitKey = StringUtils.hasText(annotation.key());
			this.explicitPayload = StringUtils.hasText(annotation.payload());
		}

		@Override
		public Type resultType(Type declared) {
			ResolvableType returnType = ResolvableType.forType(declared);
			Class<?> raw = returnType.toClass();
			if (HttpEntity.class.isAssignableFrom(raw)) {
				raw = returnType.as(HttpEntity.class).getGeneric(0).toClass();
			}
			if (CompletionStage.class.isAssignableFrom(raw) || Future.class.isAssignableFrom(raw)
					|| Callable.class.isAssignableFrom(raw) || raw.getName().startsWith("org.reactivestreams.")
					|| raw.getName().startsWith("reactor.core.")
					|| raw.getName().startsWith("org.springframework.web.context.request.async.")) {
				throw new IllegalArgumentException("an asynchronous result of a Spring MVC handler method ("
						+ raw.getName() + ") is not supported; return the result or a ResponseEntity");
			}
			if (ResponseBodyEmitter.class.isAssignableFrom(raw) || StreamingResponseBody.class.isAssignableFrom(raw)) {
				throw new IllegalArgumentException("a streaming result of a Spring MVC handler method (" + raw.getName()
						+ ") is not supported: a stream has no single response to store and replay; return the whole "
						+ "result (e.g. a List, or a ResponseEntity of it), or take the key off this method");
			}
			if (this.multipart != null && !this.explicitPayload) {
				throw new IllegalArgumentException(this.multipart);
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

		@Override
		public @Nullable Object invoke(@Nullable Object key, @Nullable Object payload, Invocation invocation)
				throws Throwable {
			RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
			HttpServletRequest request = (attributes instanceof ServletRequestAttributes servlet)
					? servlet.getRequest() : null;
			ExchangeResponse response = (request != null) ? ExchangeResponse.of(request) : null;
			if (request == null || response == null) {
				throw new IllegalStateException("An @Idempotent Spring MVC handler method is called outside a request "
						+ "that went through the " + IdempotencyResponseFilter.class.getSimpleName()
						+ " (registered by the auto-configuration): nothing was run or stored");
			}
			Object rawKey = this.explicitKey ? key
					: IdempotencyKeyHeader.parse(keyHeader, Collections.list(request.getHeaders(keyHeader)));
			Object fingerprinted = this.explicitPayload ? payload : RequestFingerprint.of(request);
			FirstRun first = new FirstRun();
			Object answer = invocation.execute(scope(rawKey, request), fingerprinted,
					() -> first.run(invocation, response));
			if (first.ran) {
				if (first.failure != null) {
					throw first.failure;
				}
				// its answer is what it returned, unless another request took the key over meanwhile
				response.settledBy(answered(answer));
				return first.result;
			}
			throw new ReplayedAnswer(answered(answer).thenApply(HttpAnswer.class::cast).join(), replayedHeader);
		}

		/** The engine answers an HTTP invocation with a future of its stored answer. */
		private static CompletableFuture<?> answered(@Nullable Object answer) {
			return (CompletableFuture<?>) Objects.requireNonNull(answer, "the engine's answer");
		}

		private @Nullable Object scope(@Nullable Object key, HttpServletRequest request) {
			if (principal == null && !principalScope) {
				return key;
			}
			Object identity;
			if (principal != null) {
				StandardEvaluationContext context = new StandardEvaluationContext(request);
				context.setVariable("request", request);
				if (beanResolver != null) {
					context.setBeanResolver(beanResolver);
				}
				identity = principal.getValue(context);
			}
			else {
				Principal user = request.getUserPrincipal();
				identity = (user != null) ? user.getName() : null;
			}
			return KeyScope.scoped(key, identity);
		}

		/** The run of the method, when this call claimed the key: settled once the response is complete. */
		private final class FirstRun {

			private boolean ran;

			private @Nullable Object result;

			private @Nullable Throwable failure;

			CompletableFuture<HttpAnswer> run(Invocation invocation, ExchangeResponse response) {
				ExchangeRun run = response.capture(permanentFailures);
				this.ran = true;
				try {
					this.result = invocation.proceed();
				}
				catch (Throwable ex) {
					this.failure = ex;
					run.threw(ex);
				}
				return run.answer();
			}

		}

	}

}
