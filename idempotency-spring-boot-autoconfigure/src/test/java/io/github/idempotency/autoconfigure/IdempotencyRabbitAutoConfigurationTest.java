package io.github.idempotency.autoconfigure;

import org.aopalliance.aop.Advice;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.junit.jupiter.api.Test;

import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.IdempotencyKeyReusedException;
import io.github.idempotency.InvalidIdempotencyKeyException;
import io.github.idempotency.amqp.IdempotencyFatalExceptionStrategy;
import io.github.idempotency.amqp.IdempotencyRabbitContainerCustomizer;
import io.github.idempotency.amqp.IdempotencyRabbitListenerBackOff;
import io.github.idempotency.amqp.IdempotentRabbitListenerReplyCheck;
import org.springframework.amqp.AmqpException;
import org.springframework.amqp.core.Address;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.listener.ConditionalRejectingErrorHandler;
import org.springframework.amqp.listener.adapter.ReplyFailureException;
import org.springframework.amqp.rabbit.config.ContainerCustomizer;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.amqp.rabbit.support.ListenerExecutionFailedException;
import org.springframework.beans.DirectFieldAccessor;
import org.springframework.boot.amqp.autoconfigure.RabbitListenerRetrySettingsCustomizer;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.retry.RetryPolicySettings;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.ResolvableType;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One fact of the RabbitMQ auto-configuration per test.
 */
class IdempotencyRabbitAutoConfigurationTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotencyRabbitAutoConfiguration.class));

	@Test
	void bootsListenerContainersGetTheIdempotencyErrorHandler() {
		this.runner.run((context) -> {
			assertThat(context.getBeanNamesForType(ResolvableType.forClassWithGenerics(ContainerCustomizer.class,
					SimpleMessageListenerContainer.class)))
				.containsExactly("idempotencySimpleRabbitContainerCustomizer");
			assertThat(context).getBeans(IdempotencyRabbitContainerCustomizer.class).hasSize(2);
		});
	}

	@Test
	@SuppressWarnings("unchecked")
	void bootsListenerContainersPauseBeforeTheRequeueOfAClaimTheStoreFailedOutsideListenerRetry() {
		this.runner.run((context) -> {
			SimpleMessageListenerContainer container = new SimpleMessageListenerContainer();
			MethodInterceptor retry = MethodInvocation::proceed;
			container.setAdviceChain(retry);
			context.getBean("idempotencySimpleRabbitContainerCustomizer", IdempotencyRabbitContainerCustomizer.class)
				.configure(container);
			Advice[] chain = (Advice[]) new DirectFieldAccessor(container).getPropertyValue("adviceChain");
			assertThat(chain).hasSize(2);
			assertThat(chain[0]).isInstanceOf(IdempotencyRabbitListenerBackOff.class);
			assertThat(chain[1]).isSameAs(retry);
		});
	}

	@Test
	void aListenerBackOffOutOfRangeFailsTheStart() {
		this.runner.withPropertyValues("idempotency.listener-back-off.multiplier=0.5")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("idempotency.listener-back-off"));
	}

	@Test
	void aUsersContainerCustomizerWins() {
		this.runner.withUserConfiguration(UserCustomizer.class)
			.run((context) -> assertThat(context).doesNotHaveBean("idempotencySimpleRabbitContainerCustomizer")
				.hasBean("idempotencyDirectRabbitContainerCustomizer"));
	}

	@Test
	void withoutSpringRabbitNothingIsConfigured() {
		this.runner.withClassLoader(new FilteredClassLoader(SimpleMessageListenerContainer.class))
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotencyRabbitContainerCustomizer.class));
	}

	@Test
	void notRetryableExceptionsAreFatalAndInProgressIsNot() {
		IdempotencyFatalExceptionStrategy strategy = new IdempotencyFatalExceptionStrategy();
		Message message = new Message(new byte[0]);
		assertThat(strategy.isFatal(new ListenerExecutionFailedException("failed",
				new IdempotencyKeyReusedException("payment"), message)))
			.isTrue();
		assertThat(strategy.isFatal(new ListenerExecutionFailedException("failed",
				new IdempotencyInProgressException("running"), message)))
			.isFalse();
		assertThat(strategy.isFatal(new ListenerExecutionFailedException("failed",
				new IllegalStateException("boom"), message)))
			.isFalse();
		assertThat(IdempotencyFatalExceptionStrategy.errorHandler()).isInstanceOf(ConditionalRejectingErrorHandler.class);
	}

	@Test
	void aKeyExpressionThatFailedIsFatalWithItsCauseInside() {
		IdempotencyFatalExceptionStrategy strategy = new IdempotencyFatalExceptionStrategy();
		Message message = new Message(new byte[0]);
		assertThat(strategy.isFatal(new ListenerExecutionFailedException("failed",
				new InvalidIdempotencyKeyException("payment", new IllegalArgumentException("no headers")), message)))
			.isTrue();
	}

	@Test
	void aReplyWithoutDestinationIsFatalAndAReplyThatCouldNotBeSentIsNot() {
		IdempotencyFatalExceptionStrategy strategy = new IdempotencyFatalExceptionStrategy();
		Message message = new Message(new byte[0]);
		assertThat(strategy.isFatal(new ListenerExecutionFailedException("failed",
				new ReplyFailureException("no reply-to", null, new AmqpException("Cannot determine ReplyTo")),
				message)))
			.isTrue();
		assertThat(strategy.isFatal(new ListenerExecutionFailedException("failed",
				new ReplyFailureException("send failed", new Address("", "replies"), new AmqpException("closed")),
				message)))
			.isFalse();
	}

	@Test
	void idempotentListenersThatReplyNowhereAreChecked() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(IdempotentRabbitListenerReplyCheck.class));
	}

	@Test
	void listenerRetrySkipsTheNotRetryableExceptionsAndKeepsTheApplicationsPredicate() {
		this.runner.run((context) -> {
			RabbitListenerRetrySettingsCustomizer customizer = context
				.getBean(IdempotencyRabbitRetrySettingsCustomizer.class);
			RetryPolicySettings settings = new RetryPolicySettings();
			settings.setExceptionPredicate((failure) -> !(failure instanceof UnsupportedOperationException));
			customizer.customize(settings);
			Message message = new Message(new byte[0]);
			assertThat(settings.getExceptionPredicate())
				.rejects(new ListenerExecutionFailedException("failed", new IdempotencyKeyReusedException("payment"),
						message), new UnsupportedOperationException("the application's own"))
				.accepts(new ListenerExecutionFailedException("failed", new IdempotencyInProgressException("running"),
						message), new IllegalStateException("boom"));
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class UserCustomizer {

		@Bean
		ContainerCustomizer<SimpleMessageListenerContainer> myCustomizer() {
			return (container) -> container.setPrefetchCount(1);
		}

	}

}
