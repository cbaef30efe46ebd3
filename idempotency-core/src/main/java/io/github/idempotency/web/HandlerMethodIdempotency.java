package io.github.idempotency.web;

import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.security.Principal;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.Future;
import java.util.concurrent.CompletionStage;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.Idempotent;
import io.github.idempotency.aop.IdempotentMethodAdapter;
import io.github.idempotency.internal.OperationDefinition;
import io.github.idempotency.internal.http.IdempotencyKeyHeader;
import io.github.idempotency.internal.http.KeyScope;
import io.github.idempotency.internal.http.RecordedHttpFailure;
import io.github.idempotency.internal.http.StoredHeaders;
import io.github.idempotency.internal.http.StoredResponse;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.core.Ordered;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Controller;
import org.springframework.util.StringUtils;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.ModelAndView;

/**
 * Adapts {@link Idempotent} to Spring MVC handler methods ({@code @RequestMapping}
 * methods of a {@code @Controller}), as the IETF draft "The Idempotency-Key HTTP Header
 * Field" describes:
 * <ul>
 * <li>the key is the {@code Idempotency-Key} request header (a structured-field string, or
 * a bare token) unless the annotation names one, scoped by the caller's identity: the
 * principal expression's value when one is set, else the authenticated principal's name
 * unless principal scoping is off;</li>
 * <li>the request's method, path, query and form parameters and body as received are
 * fingerprinted unless the annotation names a payload;</li>
 * <li>what is stored is a {@code StoredResponse}: the status, the allow-listed headers and
 * the body of a {@code ResponseEntity}, or a plain body with its {@code @ResponseStatus};
 * a replay answers with the same and marks itself with the {@code Idempotent-Replayed}
 * header;</li>
 * <li>a permanent failure is stored with the answer the application's exception handling
 * gave it (its status, allow-listed headers and body), and replayed as that answer.</li>
 * </ul>
 */
public class HandlerMethodIdempotency implements IdempotentMethodAdapter, Ordered {

	private final String keyHeader;

	private final String replayedHeader;

	private final List<String> storedHeaders;

	private final @Nullable Expression principal;

	private final boolean principalScope;

	private final @Nullable BeanFactory beanFactory;

	private final @Nullable BeanFactoryResolver beanResolver;

	/**
	 * Creates the adapter.
	 * @param keyHeader the request header that carries the key
	 * @param replayedHeader the response header that marks a replay
	 * @param storedHeaders the response headers stored and replayed
	 * @param principal SpEL for the caller's identity, evaluated on the request (as the
	 * root object and as {@code #request}), or {@code null} for none
	 * @param principalScope whether, without a principal expression, keys are scoped by
	 * the name of the request's authenticated principal ({@code getUserPrincipal()})
	 * @param beanFactory for {@code @bean} references in the principal expression, and
	 * the {@code HandlerExceptionResolver}s that answer a permanent failure
	 */
	public HandlerMethodIdempotency(String keyHeader, String replayedHeader, Collection<String> storedHeaders,
			@Nullable String principal, boolean principalScope, @Nullable BeanFactory beanFactory) {
		this.keyHeader = keyHeader;
		this.replayedHeader = replayedHeader;
		this.storedHeaders = StoredHeaders.allowed(storedHeaders);
		this.principal = KeyScope.principal(principal);
		this.principalScope = principalScope;
		this.beanFactory = beanFactory;
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
		return new HandlerMethod(method, targetClass, annotation);
	}

	private final class HandlerMethod implements Adaptation {

		private final boolean explicitKey;

		private final boolean explicitPayload;

		private final int declaredStatus;

		private final boolean responseEntity;

		private final List<Class<? extends Throwable>> permanentFailures;

		HandlerMethod(Method method, Class<?> targetClass, Idempotent annotation) {
			this.responseEntity = ResponseEntity.class.isAssignableFrom(method.getReturnType());
			this.permanentFailures = List.of(annotation.recordFailureFor());
			this.explicitKey = StringUtils.hasText(annotation.key());
			this.explicitPayload = StringUtils.hasText(annotation.payload());
			ResponseStatus status = AnnotatedElementUtils.findMergedAnnotation(method, ResponseStatus.class);
			if (status == null) {
				status = AnnotatedElementUtils.findMergedAnnotation(targetClass, ResponseStatus.class);
			}
			this.declaredStatus = (status != null) ? status.code().value() : 200;
		}

		@Override
		public OperationDefinition definition(OperationDefinition declared) {
			ResolvableType returnType = ResolvableType.forType(declared.resultType());
			Class<?> raw = returnType.toClass();
			if (CompletionStage.class.isAssignableFrom(raw) || Future.class.isAssignableFrom(raw)
					|| Callable.class.isAssignableFrom(raw) || raw.getName().startsWith("org.reactivestreams.")
					|| raw.getName().startsWith("reactor.core.")
					|| raw.getName().startsWith("org.springframework.web.context.request.async.")) {
				throw new IllegalArgumentException("an asynchronous result of a Spring MVC handler method ("
						+ raw.getName() + ") is not supported; return the result or a ResponseEntity");
			}
			Type bodyType;
			if (HttpEntity.class.isAssignableFrom(raw)) {
				if (!ResponseEntity.class.isAssignableFrom(raw)) {
					throw new IllegalArgumentException("a handler method returning " + raw.getName()
							+ " is not supported; return a ResponseEntity");
				}
				ResolvableType body = returnType.as(HttpEntity.class).getGeneric(0);
				bodyType = (body.resolve() != null) ? body.getType() : Object.class;
			}
			else {
				bodyType = (raw == void.class) ? Void.class : declared.resultType();
			}
			Type stored = ResolvableType
				.forClassWithGenerics(StoredResponse.class, ResolvableType.forType(bodyType))
				.getType();
			List<Class<? extends Throwable>> failures = declared.recordFailureFor().isEmpty() ? List.of()
					: List.of(RecordedHttpFailure.class);
			return OperationDefinition.of(declared.workflow(), stored)
				.leaseTtl(declared.leaseTtl())
				.retention(declared.retention())
				.onInProgress(declared.onInProgress())
				.recordFailureFor(failures)
				.build();
		}

		@Override
		public @Nullable Object invoke(@Nullable Object key, @Nullable Object payload, Invocation invocation)
				throws Throwable {
			RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
			HttpServletRequest request = (attributes instanceof ServletRequestAttributes servlet)
					? servlet.getRequest() : null;
			HttpServletResponse response = (attributes instanceof ServletRequestAttributes servlet)
					? servlet.getResponse() : null;
			Object rawKey = (this.explicitKey || request == null) ? key
					: IdempotencyKeyHeader.parse(keyHeader, Collections.list(request.getHeaders(keyHeader)));
			Object scopedKey = (request != null) ? scope(rawKey, request) : rawKey;
			Object fingerprinted = (this.explicitPayload || request == null) ? payload
					: RequestFingerprint.of(request);
			FirstRun first = new FirstRun();
			Object result;
			try {
				result = invocation.execute(scopedKey, fingerprinted, () -> first.run(invocation, request, response));
			}
			catch (RecordedHttpFailure ex) {
				Throwable original = ex.getCause();
				if (ex == first.failure && original != null) {
					for (Throwable suppressed : ex.getSuppressed()) {
						original.addSuppressed(suppressed);
					}
					if (request != null && first.answer != null) {
						CapturedFailureResolver.capture(request, original, first.answer);
					}
					throw original;
				}
				throw ex;
			}
			if (first.stored != null && result == first.stored) {
				return first.result;
			}
			if (response != null) {
				response.setHeader(replayedHeader, "true");
			}
			return replay((StoredResponse<?>) result, response);
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

		private @Nullable Object replay(StoredResponse<?> stored, @Nullable HttpServletResponse response) {
			HttpHeaders headers = new HttpHeaders();
			stored.headers().forEach(headers::addAll);
			if (this.responseEntity) {
				return ResponseEntity.status(stored.status()).headers(headers).body(stored.body());
			}
			if (response != null) {
				headers.forEach((name, values) -> values.forEach((value) -> response.addHeader(name, value)));
				if (stored.status() != this.declaredStatus) {
					response.setStatus(stored.status());
				}
			}
			return stored.body();
		}

		private StoredResponse<?> store(@Nullable Object result, @Nullable HttpServletResponse response) {
			Map<String, List<String>> headers = new LinkedHashMap<>();
			if (result instanceof ResponseEntity<?> entity) {
				for (String name : storedHeaders) {
					List<String> values = entity.getHeaders().get(name);
					if (values != null && !values.isEmpty()) {
						headers.put(name, List.copyOf(values));
					}
				}
				return new StoredResponse<>(entity.getStatusCode().value(), headers, entity.getBody());
			}
			if (response != null) {
				for (String name : storedHeaders) {
					Collection<String> values = response.getHeaders(name);
					if (values != null && !values.isEmpty()) {
						headers.put(name, new ArrayList<>(values));
					}
				}
			}
			return new StoredResponse<>(this.declaredStatus, headers, this.responseEntity ? null : result);
		}

		private final class FirstRun {

			private @Nullable Object result;

			private @Nullable StoredResponse<?> stored;

			private @Nullable RecordedHttpFailure failure;

			private @Nullable CapturedResponse answer;

			@Nullable Object run(Invocation invocation, @Nullable HttpServletRequest request,
					@Nullable HttpServletResponse response) throws Throwable {
				try {
					this.result = invocation.proceed();
				}
				catch (Throwable ex) {
					if (isPermanent(ex)) {
						this.answer = (request != null && response != null && ex instanceof Exception exception)
								? answer(request, response, exception) : null;
						RecordedHttpFailure.Answer stored = (this.answer != null)
								? this.answer.toAnswer(storedHeaders) : null;
						int status = (this.answer != null) ? this.answer.status() : RecordedHttpFailure.statusOf(ex);
						this.failure = new RecordedHttpFailure(status, ex, stored);
						throw this.failure;
					}
					throw ex;
				}
				this.stored = store(this.result, response);
				return this.stored;
			}

		}

		/**
		 * What the application's exception handling answers to a permanent failure, as
		 * the {@code DispatcherServlet} would ask it (its {@code HandlerExceptionResolver}s
		 * in order), written to a captured response; {@code null} when none answers or one
		 * answers with a view to render.
		 */
		private @Nullable CapturedResponse answer(HttpServletRequest request, HttpServletResponse response,
				Exception failure) {
			if (beanFactory == null) {
				return null;
			}
			Object handler = request.getAttribute(HandlerMapping.BEST_MATCHING_HANDLER_ATTRIBUTE);
			if (handler instanceof org.springframework.web.method.HandlerMethod method) {
				// the mapping's handler names its bean: the DispatcherServlet's has it resolved
				handler = method.createWithResolvedBean();
			}
			CapturedResponse captured = new CapturedResponse(response);
			List<HandlerExceptionResolver> resolvers = beanFactory.getBeanProvider(HandlerExceptionResolver.class)
				.orderedStream()
				.filter((resolver) -> !(resolver instanceof CapturedFailureResolver))
				.toList();
			try {
				for (HandlerExceptionResolver resolver : resolvers) {
					ModelAndView answer = resolver.resolveException(request, captured, handler, failure);
					if (answer != null) {
						return answer.isEmpty() ? captured : null;
					}
				}
			}
			catch (RuntimeException ex) {
				// the DispatcherServlet meets the same when the failure leaves the method
				failure.addSuppressed(ex);
			}
			return null;
		}

		private boolean isPermanent(Throwable ex) {
			for (Class<? extends Throwable> type : this.permanentFailures) {
				if (type.isInstance(ex)) {
					return true;
				}
			}
			return false;
		}

	}

}
