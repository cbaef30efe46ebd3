package io.github.idempotency.autoconfigure.amqp;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import io.github.idempotency.Idempotent;
import io.github.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import io.github.idempotency.autoconfigure.IdempotencyRabbitAutoConfiguration;
import io.github.idempotency.metrics.IdempotencyMeters;
import io.github.idempotency.testservers.TestServers;
import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.support.converter.JacksonJsonMessageConverter;
import org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.messaging.handler.annotation.SendTo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The traps a new user met with {@code @Idempotent @RabbitListener} methods, on a real
 * RabbitMQ: each used to loop one message for ever (or drop it without a word). Each
 * delivery is one count of {@code idempotency.requests}, so the counters tell how often a
 * message came back.
 * <p>
 * {@link VoidListener}, {@link ReplyListener}, {@link ReadmeQueues} and {@link Json} are
 * docs/brokers.md's RabbitMQ snippets (section "RabbitMQ"), with this run's queue names
 * (and an expiry, so that they do not outlive the test).
 */
@ExtendWith(OutputCaptureExtension.class)
class RabbitListenerTrapsTest {

	private static final String KEY_HEADER = "idempotency-key";

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private final Queues queues = new Queues("idempotency-traps-" + UUID.randomUUID());

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, JacksonAutoConfiguration.class,
				IdempotencyAutoConfiguration.class, IdempotencyRabbitAutoConfiguration.class,
				RabbitAutoConfiguration.class))
		.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
		.withBean("queues", Queues.class, () -> this.queues)
		.withPropertyValues("idempotency.backend=memory", "spring.rabbitmq.addresses=" + TestServers.rabbitMqUrl());

	@Test
	void springMessagingHeadersOnAnAmqpMessageFailTheStartInsteadOfEveryDelivery() {
		this.runner.withUserConfiguration(DeadLettered.class, AmqpMessageListener.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure())
				.hasMessageContaining("@Idempotent on " + AmqpMessageListener.class.getName() + ".onPayment")
				.hasMessageContaining("#msg.headers cannot be read");
		});
	}

	@Test
	void aKeyExpressionThatFailsOnTheArgumentIsDeadLetteredAfterOneDelivery() {
		this.runner.withUserConfiguration(DeadLettered.class, ObjectListener.class).run((context) -> {
			send(context, MessageBuilder.withBody("100".getBytes(StandardCharsets.UTF_8))
				.setHeader(KEY_HEADER, "o-1")
				.build());
			Message deadLetter = context.getBean(RabbitTemplate.class)
				.receive(this.queues.deadLetters(), TIMEOUT.toMillis());
			assertThat(deadLetter).as("dead-lettered").isNotNull();
			assertThat(deadLetter.getMessageProperties().<String>getHeader(KEY_HEADER)).isEqualTo("o-1");
			assertThat(requests(context, "declared-object", "invalid_key")).isOne();
			assertThat(requests(context, "declared-object", null)).as("deliveries").isOne();
			assertThat(context.getBean(ObjectListener.class).runs()).isZero();
		});
	}

	@Test
	void aListenerThatReturnsAValueWithoutReplyDestinationIsWarnedAboutAndItsMessageDeadLettered(
			CapturedOutput output) {
		this.runner.withUserConfiguration(DeadLettered.class, Json.class, NowhereListener.class).run((context) -> {
			assertThat(output).contains("@Idempotent @RabbitListener " + NowhereListener.class.getName()
					+ ".onPayment returns Receipt but names no reply destination");
			sendPayment(context, "n-1", 100);
			Message deadLetter = context.getBean(RabbitTemplate.class)
				.receive(this.queues.deadLetters(), TIMEOUT.toMillis());
			assertThat(deadLetter).as("dead-lettered").isNotNull();
			assertThat(requests(context, "payment", "miss")).isOne();
			assertThat(requests(context, "payment", null)).as("deliveries").isOne();
			assertThat(context.getBean(NowhereListener.class).runs()).isOne();
			assertThat(output).contains("its reply has no destination");
		});
	}

	@Test
	void readmesReplyingListenerAnswersADuplicateWithTheStoredReceipt(CapturedOutput output) {
		this.runner.withUserConfiguration(ReadmeQueues.class, Json.class, ReplyListener.class).run((context) -> {
			sendPayment(context, "s-1", 100);
			sendPayment(context, "s-1", 100);
			RabbitTemplate template = context.getBean(RabbitTemplate.class);
			ParameterizedTypeReference<Receipt> receipt = new ParameterizedTypeReference<>() {
			};
			Receipt first = template.receiveAndConvert(this.queues.replies(), TIMEOUT.toMillis(), receipt);
			Receipt second = template.receiveAndConvert(this.queues.replies(), TIMEOUT.toMillis(), receipt);
			assertThat(first).isNotNull().isEqualTo(second);
			assertThat(requests(context, "payment", "hit")).isOne();
			assertThat(context.getBean(ReplyListener.class).runs()).isOne();
			assertThat(output).doesNotContain("names no reply destination");
		});
	}

	@Test
	void readmesVoidListenerAcknowledgesADuplicate() {
		this.runner.withUserConfiguration(ReadmeQueues.class, Json.class, VoidListener.class).run((context) -> {
			sendPayment(context, "v-1", 100);
			sendPayment(context, "v-1", 100);
			await().atMost(TIMEOUT).until(() -> requests(context, "payment", "hit") == 1);
			assertThat(context.getBean(VoidListener.class).runs()).isOne();
			AmqpAdmin admin = context.getBean(AmqpAdmin.class);
			await().atMost(TIMEOUT)
				.untilAsserted(() -> assertThat(admin.getQueueInfo(this.queues.main()).getMessageCount()).isZero());
			assertThat(admin.getQueueInfo(this.queues.deadLetters()).getMessageCount()).isZero();
		});
	}

	@Test
	void aMissingKeyOnAQueueWithoutDeadLetterExchangeIsDroppedWithALogLineThatSaysWhy(CapturedOutput output) {
		this.runner.withUserConfiguration(NotDeadLettered.class, Json.class, VoidListener.class).run((context) -> {
			context.getBean(RabbitTemplate.class)
				.convertAndSend("", this.queues.main(), new PaymentRequested("no-key", 100));
			await().atMost(TIMEOUT).until(() -> requests(context, "payment", "invalid_key") == 1);
			await().atMost(TIMEOUT)
				.until(() -> output.toString().contains("Rejected without requeue: idempotency outcome invalid_key"));
			assertThat(output).contains("MissingIdempotencyKeyException: The idempotency key of 'payment' is missing")
				.contains("It goes to the queue's dead-letter exchange; a queue without one drops it")
				.doesNotContain("Fatal message conversion error");
			AmqpAdmin admin = context.getBean(AmqpAdmin.class);
			assertThat(admin.getQueueInfo(this.queues.main()).getMessageCount()).isZero();
			assertThat(requests(context, "payment", null)).as("deliveries").isOne();
			assertThat(context.getBean(VoidListener.class).runs()).isZero();
		});
	}

	private void send(ApplicationContext context, Message message) {
		context.getBean(RabbitTemplate.class).send("", this.queues.main(), message);
	}

	private void sendPayment(ApplicationContext context, String key, long amount) {
		context.getBean(RabbitTemplate.class)
			.convertAndSend("", this.queues.main(), new PaymentRequested(key, amount), (message) -> {
				message.getMessageProperties().setHeader(KEY_HEADER, key);
				return message;
			});
	}

	/**
	 * Calls of a workflow, all outcomes or one: each delivery of a message counts once.
	 */
	private static double requests(ApplicationContext context, String workflow, @Nullable String outcome) {
		return context.getBean(MeterRegistry.class)
			.find(IdempotencyMeters.REQUESTS)
			.tags(IdempotencyMeters.TAG_WORKFLOW, workflow)
			.tags((outcome != null) ? new String[] { IdempotencyMeters.TAG_OUTCOME, outcome } : new String[0])
			.counters()
			.stream()
			.mapToDouble(Counter::count)
			.sum();
	}

	/**
	 * Names of this run's queues; they expire a minute after their last use.
	 *
	 * @param main the listener's queue
	 */
	record Queues(String main) {

		public String deadLetters() {
			return this.main + ".dlq";
		}

		public String replies() {
			return this.main + ".replies";
		}

	}

	record PaymentRequested(String paymentId, long amount) {
	}

	record Receipt(String paymentId, long amount, int sequence) {
	}

	/** Counts how often a listener's body ran. */
	abstract static class Counting {

		private final AtomicInteger runs = new AtomicInteger();

		public int runs() {
			return this.runs.get();
		}

		int run() {
			return this.runs.incrementAndGet();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class DeadLettered {

		@Bean
		Queue paymentQueue(Queues queues) {
			return QueueBuilder.nonDurable(queues.main())
				.expires(60_000)
				.deadLetterExchange("")
				.deadLetterRoutingKey(queues.deadLetters())
				.build();
		}

		@Bean
		Queue deadLetterQueue(Queues queues) {
			return QueueBuilder.nonDurable(queues.deadLetters()).expires(60_000).build();
		}

		@Bean
		Queue replyQueue(Queues queues) {
			return QueueBuilder.nonDurable(queues.replies()).expires(60_000).build();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ReadmeQueues {

		// docs/brokers.md, "RabbitMQ"; receipts is @SendTo's destination
		@Bean
		Queue payments(Queues queues) {
			return QueueBuilder.durable(queues.main())
				.deadLetterExchange("")
				.deadLetterRoutingKey(queues.deadLetters())
				.expires(60_000)
				.build();
		}

		@Bean
		Queue paymentsDeadLetters(Queues queues) {
			return QueueBuilder.durable(queues.deadLetters()).expires(60_000).build();
		}

		@Bean
		Queue receipts(Queues queues) {
			return QueueBuilder.nonDurable(queues.replies()).expires(60_000).build();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class NotDeadLettered {

		@Bean
		Queue paymentQueue(Queues queues) {
			return QueueBuilder.nonDurable(queues.main()).expires(60_000).build();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Json {

		// docs/brokers.md, "RabbitMQ": a JSON payload as PaymentRequested
		@Bean
		JacksonJsonMessageConverter messageConverter() {
			return new JacksonJsonMessageConverter();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class AmqpMessageListener {

		// docs/brokers.md's key on Spring AMQP's own Message, which has getMessageProperties(), no getHeaders()
		@RabbitListener(queues = "#{@queues.main()}")
		@Idempotent(key = "#msg.headers['idempotency-key']", workflow = "payment")
		public void onPayment(Message msg) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ObjectListener extends Counting {

		// declared as Object: the start cannot tell; the argument is the body's bytes
		@RabbitListener(queues = "#{@queues.main()}")
		@Idempotent(key = "#msg.headers['idempotency-key']", workflow = "declared-object")
		public void onPayment(Object msg) {
			run();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class NowhereListener extends Counting {

		@RabbitListener(queues = "#{@queues.main()}")
		@Idempotent(key = "#msg.headers['idempotency-key']", workflow = "payment")
		public Receipt onPayment(org.springframework.messaging.Message<PaymentRequested> msg) {
			return new Receipt(msg.getPayload().paymentId(), msg.getPayload().amount(), run());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class VoidListener extends Counting {

		// docs/brokers.md, "RabbitMQ" (queue names: this run's)
		@RabbitListener(queues = "#{@queues.main()}")
		@Idempotent(key = "#msg.headers['idempotency-key']", workflow = "payment")
		public void onPayment(org.springframework.messaging.Message<PaymentRequested> msg) {
			run();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ReplyListener extends Counting {

		// docs/brokers.md, "RabbitMQ" (queue names: this run's)
		@RabbitListener(queues = "#{@queues.main()}")
		@SendTo("#{@queues.replies()}")
		@Idempotent(key = "#msg.headers['idempotency-key']", workflow = "payment")
		public Receipt onPayment(org.springframework.messaging.Message<PaymentRequested> msg) {
			return new Receipt(msg.getPayload().paymentId(), msg.getPayload().amount(), run());
		}

	}

}
