package io.github.idempotency.aop;

import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;

import io.github.idempotency.Idempotent;
import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.beans.factory.aot.AotServices;
import org.springframework.beans.factory.aot.BeanRegistrationAotContribution;
import org.springframework.beans.factory.aot.BeanRegistrationAotProcessor;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.beans.factory.support.RegisteredBean;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.javapoet.ClassName;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Ahead-of-time processing registers the result types of {@code @Idempotent} methods,
 * which Jackson reads back, for reflection.
 */
class IdempotentResultTypesAotProcessorTest {

	@Test
	void theResultTypesOfIdempotentMethodsGetBindingHints() {
		DefaultListableBeanFactory beanFactory = new DefaultListableBeanFactory();
		beanFactory.registerBeanDefinition("payments", new RootBeanDefinition(Payments.class));
		BeanRegistrationAotProcessor processor = AotServices.factories()
			.load(BeanRegistrationAotProcessor.class)
			.stream()
			.filter(IdempotentResultTypesAotProcessor.class::isInstance)
			.findFirst()
			.orElseThrow();
		BeanRegistrationAotContribution contribution = processor
			.processAheadOfTime(RegisteredBean.of(beanFactory, "payments"));
		assertThat(contribution).isNotNull();
		DefaultGenerationContext context = new DefaultGenerationContext(
				new ClassNameGenerator(ClassName.get("com.example", "Test")), new InMemoryGeneratedFiles());
		contribution.applyTo(context, null);
		RuntimeHints hints = context.getRuntimeHints();
		assertThat(RuntimeHintsPredicates.reflection().onType(Receipt.class)).accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(Refund.class)).accepts(hints);
	}

	static class Payments {

		@Idempotent(key = "#key")
		public Receipt pay(String key) {
			return new Receipt(key);
		}

		@Idempotent(key = "#key")
		public CompletableFuture<Refund> refund(String key) {
			return CompletableFuture.completedFuture(new Refund(key));
		}

	}

	record Receipt(String key) {
	}

	record Refund(String key) {
	}

}
