package io.github.idempotency.autoconfigure;

import java.util.Locale;

import org.springframework.boot.autoconfigure.condition.ConditionMessage;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.BindResult;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.core.type.ClassMetadata;

/**
 * Matches a store configuration when {@code idempotency.backend} names its backend, or is
 * unset (then the order of the configurations and their bean conditions detect the
 * store). A value that is not a backend fails the binding, naming the accepted values.
 */
class BackendCondition extends SpringBootCondition {

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		String sourceClass = (metadata instanceof ClassMetadata classMetadata) ? classMetadata.getClassName() : "";
		IdempotencyBackend required = StoreConfigurations.backendOf(sourceClass);
		ConditionMessage.Builder message = ConditionMessage.forCondition("Idempotency backend", sourceClass);
		BindResult<IdempotencyBackend> specified = Binder.get(context.getEnvironment())
			.bind("idempotency.backend", IdempotencyBackend.class);
		if (!specified.isBound()) {
			return (required == IdempotencyBackend.HYBRID)
					? ConditionOutcome.noMatch(message.because("hybrid is only used when named"))
					: ConditionOutcome.match(message.because("idempotency.backend is unset: detecting"));
		}
		if (specified.get() == required) {
			return ConditionOutcome.match(message.because(name(required) + " backend"));
		}
		return ConditionOutcome.noMatch(message.because(name(specified.get()) + " backend"));
	}

	private static String name(IdempotencyBackend backend) {
		return backend.name().toLowerCase(Locale.ROOT);
	}

}
