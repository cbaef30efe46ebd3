package io.github.idempotency.actuate;

import java.util.Set;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.actuate.IdempotencyEndpoint.RecordDescriptor;
import io.github.idempotency.actuate.IdempotencyEndpoint.RecordNotFoundDescriptor;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

/**
 * The HTTP side of {@link IdempotencyEndpoint}: a record's stored values are shown when
 * {@code management.endpoint.idempotency.show-values} says so for the caller —
 * {@link Show#WHEN_AUTHORIZED} shows them to an authenticated caller with one of
 * {@code management.endpoint.idempotency.roles} (any authenticated caller when no role is
 * set), as Spring Boot does for {@code env} and {@code configprops}.
 */
@EndpointWebExtension(endpoint = IdempotencyEndpoint.class)
public class IdempotencyEndpointWebExtension {

	private final IdempotencyEndpoint delegate;

	private final Show showValues;

	private final Set<String> roles;

	/**
	 * The extension of {@code delegate}.
	 * @param delegate the endpoint that reads the records
	 * @param showValues when stored values are shown over HTTP
	 * @param roles the roles {@link Show#WHEN_AUTHORIZED} requires; empty: any
	 * authenticated caller
	 */
	public IdempotencyEndpointWebExtension(IdempotencyEndpoint delegate, Show showValues, Set<String> roles) {
		this.delegate = delegate;
		this.showValues = showValues;
		this.roles = Set.copyOf(roles);
	}

	/**
	 * One record, its stored values shown or masked for this caller: {@code key} as given,
	 * else as an anonymous HTTP caller's key.
	 * @param securityContext the caller
	 * @param workflow the workflow
	 * @param key the idempotency key
	 * @return the record, or {@code null} when there is none
	 */
	public @Nullable RecordDescriptor record(SecurityContext securityContext, String workflow, String key) {
		return this.delegate.record(workflow, key, null, this.showValues.isShown(securityContext, this.roles));
	}

	/**
	 * One record, found as {@link IdempotencyEndpoint#record(String, String, String)} finds
	 * it, its stored values shown or masked for this caller; without one, a 404 whose body
	 * says what was looked up ({@link RecordNotFoundDescriptor}).
	 * @param securityContext the caller
	 * @param workflow the workflow
	 * @param key the idempotency key
	 * @param scope the HTTP caller whose key it is, or {@code null}
	 * @return the record, or what was looked up with the status 404
	 */
	@ReadOperation
	public WebEndpointResponse<Object> record(SecurityContext securityContext, @Selector String workflow,
			@Selector String key, @Nullable String scope) {
		RecordDescriptor record = this.delegate.record(workflow, key, scope,
				this.showValues.isShown(securityContext, this.roles));
		if (record == null) {
			return new WebEndpointResponse<>(IdempotencyEndpoint.notFound(workflow, key, scope),
					WebEndpointResponse.STATUS_NOT_FOUND);
		}
		return new WebEndpointResponse<>(record);
	}

}
