package io.github.idempotency.autoconfigure;

import java.util.Locale;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.autoconfigure.condition.ConditionMessage;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.origin.Origin;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.core.type.ClassMetadata;

/**
 * Matches a store configuration when {@code idempotency.backend} names its backend, or is
 * unset (then the order of the configurations and their bean conditions detect the
 * store). A value that names no backend fails the start ({@link InvalidBackendException}),
 * naming the accepted values.
 */
class BackendCondition extends SpringBootCondition {

	private static final ConfigurationPropertyName BACKEND = ConfigurationPropertyName.of("idempotency.backend");

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		String sourceClass = (metadata instanceof ClassMetadata classMetadata) ? classMetadata.getClassName() : "";
		IdempotencyBackend required = StoreConfigurations.backendOf(sourceClass);
		ConditionMessage.Builder message = ConditionMessage.forCondition("Idempotency backend", sourceClass);
		IdempotencyBackend specified = specified(context);
		if (specified == null) {
			return (required == IdempotencyBackend.HYBRID)
					? ConditionOutcome.noMatch(message.because("hybrid is only used when named"))
					: ConditionOutcome.match(message.because("idempotency.backend is unset: detecting"));
		}
		if (specified == required) {
			return ConditionOutcome.match(message.because(name(required) + " backend"));
		}
		return ConditionOutcome.noMatch(message.because(name(specified) + " backend"));
	}

	/**
	 * The backend {@code idempotency.backend} names.
	 * @param context the condition context
	 * @return the backend, or {@code null} when the property is unset
	 * @throws InvalidBackendException when the value names no backend
	 */
	static @Nullable IdempotencyBackend specified(ConditionContext context) {
		String value = Binder.get(context.getEnvironment()).bind(BACKEND, Bindable.of(String.class)).orElse(null);
		if (value == null || value.isBlank()) {
			return null;
		}
		for (IdempotencyBackend backend : IdempotencyBackend.values()) {
			if (backend.name().equalsIgnoreCase(value.trim())) {
				return backend;
			}
		}
		throw new InvalidBackendException(value, origin(context.getEnvironment()));
	}

	private static @Nullable Origin origin(Environment environment) {
		for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
			ConfigurationProperty property = source.getConfigurationProperty(BACKEND);
			if (property != null) {
				return property.getOrigin();
			}
		}
		return null;
	}

	private static String name(IdempotencyBackend backend) {
		return backend.name().toLowerCase(Locale.ROOT);
	}

}
