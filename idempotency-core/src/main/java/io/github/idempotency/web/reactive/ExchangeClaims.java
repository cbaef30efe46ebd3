package io.github.idempotency.web.reactive;

import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import io.github.idempotency.internal.http.HttpFingerprint;
import io.github.idempotency.internal.http.IdempotencyKeyHeader;
import io.github.idempotency.internal.http.KeyScope;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.server.ServerWebExchange;

/**
 * What a WebFlux request claims, read without blocking from the exchange its handler method
 * is called with: the key (the {@code Idempotency-Key} header, or the annotation's), scoped
 * by the caller's identity (the principal expression's value, else the authenticated
 * principal's name unless principal scoping is off), and the fingerprint (method, path,
 * query, form, and the body's digest), or the annotation's payload.
 */
final class ExchangeClaims {

	private static final String ANONYMOUS = "org.springframework.security.authentication.AnonymousAuthenticationToken";

	private final String keyHeader;

	private final @Nullable Expression principal;

	private final boolean principalScope;

	private final @Nullable BeanFactoryResolver beanResolver;

	ExchangeClaims(String keyHeader, @Nullable Expression principal, boolean principalScope,
			@Nullable BeanFactoryResolver beanResolver) {
		this.keyHeader = keyHeader;
		this.principal = principal;
		this.principalScope = principalScope;
		this.beanResolver = beanResolver;
	}

	/** The scoped key and the fingerprint of a request. */
	Mono<Claim> claim(ServerWebExchange exchange, @Nullable Object key, boolean explicitKey, @Nullable Object payload,
			boolean explicitPayload) {
		Object rawKey = explicitKey ? key
				: IdempotencyKeyHeader.parse(this.keyHeader, exchange.getRequest().getHeaders().get(this.keyHeader));
		Mono<Optional<Object>> fingerprint = explicitPayload ? Mono.just(Optional.ofNullable(payload))
				: fingerprint(exchange).map(Optional::of);
		return Mono.zip(identity(exchange), fingerprint,
				(identity, fingerprinted) -> new Claim(KeyScope.scoped(rawKey, identity.orElse(null)),
						fingerprinted.orElse(null)));
	}

	/** The caller's identity: the expression's value, else the authenticated principal's name. */
	private Mono<Optional<Object>> identity(ServerWebExchange exchange) {
		if (this.principal != null) {
			StandardEvaluationContext evaluation = new StandardEvaluationContext(exchange.getRequest());
			evaluation.setVariable("request", exchange.getRequest());
			evaluation.setVariable("exchange", exchange);
			if (this.beanResolver != null) {
				evaluation.setBeanResolver(this.beanResolver);
			}
			return Mono.just(Optional.ofNullable(this.principal.getValue(evaluation)));
		}
		if (!this.principalScope) {
			return Mono.just(Optional.empty());
		}
		return exchange.getPrincipal()
			.filter((user) -> !ANONYMOUS.equals(user.getClass().getName()))
			.map((user) -> Optional.<Object>of(user.getName()))
			.defaultIfEmpty(Optional.empty());
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

	/**
	 * What a request claims: its scoped key and its fingerprint.
	 * @param key the key, scoped by the caller's identity
	 * @param payload the fingerprint, or the annotation's payload
	 */
	record Claim(@Nullable Object key, @Nullable Object payload) {
	}

}
