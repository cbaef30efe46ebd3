package io.github.idempotency.actuate;

import java.util.Set;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.actuate.IdempotencyEndpoint.RecordDescriptor;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
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
	 * One record, its stored values shown or masked for this caller.
	 * @param securityContext the caller
	 * @param workflow the workflow
	 * @param key the idempotency key
	 * @return the record, or {@code null} (404) when there is none
	 */
	@ReadOperation
	public @Nullable RecordDescriptor record(SecurityContext securityContext, @Selector String workflow,
			@Selector String key) {
		return this.delegate.record(workflow, key, this.showValues.isShown(securityContext, this.roles));
	}

}
