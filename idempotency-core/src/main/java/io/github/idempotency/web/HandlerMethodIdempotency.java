package io.github.idempotency.web;

import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.Future;
import java.util.concurrent.CompletionStage;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.Idempotent;
import io.github.idempotency.aop.IdempotentMethodAdapter;
import io.github.idempotency.internal.OperationDefinition;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.core.MethodParameter;
import org.springframework.core.Ordered;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Controller;
import org.springframework.util.StringUtils;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

/**
 * Adapts {@link Idempotent} to Spring MVC handler methods ({@code @RequestMapping}
 * methods of a {@code @Controller}), as the IETF draft "The Idempotency-Key HTTP Header
 * Field" describes:
 * <ul>
 * <li>the key is the {@code Idempotency-Key} request header unless the annotation names
 * one, scoped by the caller's identity when a principal expression is set;</li>
 * <li>the request's method, path and body are fingerprinted unless the annotation names a
 * payload;</li>
 * <li>what is stored is a {@code StoredResponse}: the status, the allow-listed headers and
 * the body of a {@code ResponseEntity}, or a plain body with its {@code @ResponseStatus};
 * a replay answers with the same and marks itself with the {@code Idempotent-Replayed}
 * header;</li>
 * <li>a permanent failure is stored with the status it maps to.</li>
 * </ul>
 */
public class HandlerMethodIdempotency implements IdempotentMethodAdapter, Ordered {

	/** Headers never stored, whatever the allow-list says. */
	private static final Set<String> NEVER_STORED = Set.of("set-cookie", "set-cookie2", "authorization",
			"proxy-authorization", "www-authenticate", "proxy-authenticate", "cookie");

	private final String keyHeader;

	private final String replayedHeader;

	private final List<String> storedHeaders;

	private final @Nullable Expression principal;

	private final @Nullable BeanFactoryResolver beanResolver;

	/**
	 * Creates the adapter.
	 * @param keyHeader the request header that carries the key
	 * @param replayedHeader the response header that marks a replay
	 * @param storedHeaders the response headers stored and replayed
	 * @param principal SpEL for the caller's identity, evaluated on the request (as the
	 * root object and as {@code #request}), or {@code null} for none
	 * @param beanFactory for {@code @bean} references in the principal expression
	 */
	public HandlerMethodIdempotency(String keyHeader, String replayedHeader, Collection<String> storedHeaders,
			@Nullable String principal, @Nullable BeanFactory beanFactory) {
		this.keyHeader = keyHeader;
		this.replayedHeader = replayedHeader;
		this.storedHeaders = storedHeaders.stream()
			.filter((name) -> !NEVER_STORED.contains(name.toLowerCase(Locale.ROOT)))
			.toList();
		this.principal = StringUtils.hasText(principal) ? parse(principal) : null;
		this.beanResolver = (beanFactory != null) ? new BeanFactoryResolver(beanFactory) : null;
	}

	private static Expression parse(String principal) {
		try {
			return new SpelExpressionParser().parseExpression(principal);
		}
		catch (ParseException ex) {
			throw new IllegalArgumentException(
					"idempotency.web.principal is not a valid SpEL expression: " + ex.getMessage(), ex);
		}
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

		private final int bodyIndex;

		private final int declaredStatus;

		private final boolean responseEntity;

		private final List<Class<? extends Throwable>> permanentFailures;

		HandlerMethod(Method method, Class<?> targetClass, Idempotent annotation) {
			this.responseEntity = ResponseEntity.class.isAssignableFrom(method.getReturnType());
			this.permanentFailures = List.of(annotation.recordFailureFor());
			this.explicitKey = StringUtils.hasText(annotation.key());
			this.explicitPayload = StringUtils.hasText(annotation.payload());
			this.bodyIndex = bodyIndex(method);
			ResponseStatus status = AnnotatedElementUtils.findMergedAnnotation(method, ResponseStatus.class);
			if (status == null) {
				status = AnnotatedElementUtils.findMergedAnnotation(targetClass, ResponseStatus.class);
			}
			this.declaredStatus = (status != null) ? status.code().value() : 200;
		}

		private static int bodyIndex(Method method) {
			for (int i = 0; i < method.getParameterCount(); i++) {
				if (new MethodParameter(method, i).hasParameterAnnotation(RequestBody.class)) {
					return i;
				}
			}
			return -1;
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
			return new OperationDefinition(declared.workflow(), stored, true, declared.leaseTtl(),
					declared.retention(), declared.onInProgress(), failures);
		}

		@Override
		public @Nullable Object invoke(@Nullable Object key, @Nullable Object payload, Invocation invocation)
				throws Throwable {
			RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
			HttpServletRequest request = (attributes instanceof ServletRequestAttributes servlet)
					? servlet.getRequest() : null;
			HttpServletResponse response = (attributes instanceof ServletRequestAttributes servlet)
					? servlet.getResponse() : null;
			Object rawKey = (this.explicitKey || request == null) ? key : request.getHeader(keyHeader);
			Object scopedKey = (request != null) ? scope(rawKey, request) : rawKey;
			Object fingerprinted = (this.explicitPayload || request == null) ? payload
					: Arrays.asList(request.getMethod(), request.getRequestURI(),
							(this.bodyIndex >= 0) ? invocation.arguments()[this.bodyIndex] : null);
			FirstRun first = new FirstRun();
			Object result;
			try {
				result = invocation.execute(scopedKey, fingerprinted, () -> first.run(invocation, response));
			}
			catch (RecordedHttpFailure ex) {
				if (ex == first.failure && ex.getCause() != null) {
					for (Throwable suppressed : ex.getSuppressed()) {
						ex.getCause().addSuppressed(suppressed);
					}
					throw ex.getCause();
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
			if (principal == null || key == null) {
				return key;
			}
			String text = (key instanceof byte[] bytes) ? new String(bytes, StandardCharsets.UTF_8) : key.toString();
			if (!StringUtils.hasText(text)) {
				return key;
			}
			StandardEvaluationContext context = new StandardEvaluationContext(request);
			context.setVariable("request", request);
			if (beanResolver != null) {
				context.setBeanResolver(beanResolver);
			}
			Object identity = principal.getValue(context);
			// length-prefixed, so that no principal and key pair meets another
			return (identity != null) ? identity.toString().length() + ":" + identity + "|" + text : "-|" + text;
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

			@Nullable Object run(Invocation invocation, @Nullable HttpServletResponse response) throws Throwable {
				try {
					this.result = invocation.proceed();
				}
				catch (Throwable ex) {
					if (isPermanent(ex)) {
						this.failure = new RecordedHttpFailure(RecordedHttpFailure.statusOf(ex), ex);
						throw this.failure;
					}
					throw ex;
				}
				this.stored = store(this.result, response);
				return this.stored;
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

	}

}
