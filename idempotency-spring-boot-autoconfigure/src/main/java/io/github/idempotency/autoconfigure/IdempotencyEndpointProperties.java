package io.github.idempotency.autoconfigure;

import java.util.HashSet;
import java.util.Set;

import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration of the {@code idempotency} Actuator endpoint, named as Spring Boot names
 * it for {@code env} and {@code configprops}.
 */
@ConfigurationProperties("management.endpoint.idempotency")
public class IdempotencyEndpointProperties {

	/**
	 * When to show a record's stored values (response, error message, recovery point)
	 * instead of masking them: never, when-authorized or always.
	 */
	private Show showValues = Show.NEVER;

	/**
	 * Roles used to determine whether a user is authorized to be shown a record's stored
	 * values. When empty, all authenticated users are authorized.
	 */
	private final Set<String> roles = new HashSet<>();

	public Show getShowValues() {
		return this.showValues;
	}

	public void setShowValues(Show showValues) {
		this.showValues = showValues;
	}

	public Set<String> getRoles() {
		return this.roles;
	}

}
