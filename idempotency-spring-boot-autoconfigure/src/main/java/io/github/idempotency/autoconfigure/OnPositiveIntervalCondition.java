package io.github.idempotency.autoconfigure;

import java.time.Duration;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches when an interval property is positive (unset: its default); {@code 0} turns the
 * scheduled task it paces off.
 */
abstract class OnPositiveIntervalCondition extends SpringBootCondition {

	private final String property;

	private final Duration defaultInterval;

	OnPositiveIntervalCondition(String property, Duration defaultInterval) {
		this.property = property;
		this.defaultInterval = defaultInterval;
	}

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		Duration interval = Binder.get(context.getEnvironment())
			.bind(this.property, Duration.class)
			.orElse(this.defaultInterval);
		String message = this.property + " is " + interval;
		return (interval.isZero() || interval.isNegative()) ? ConditionOutcome.noMatch(message)
				: ConditionOutcome.match(message);
	}

}
