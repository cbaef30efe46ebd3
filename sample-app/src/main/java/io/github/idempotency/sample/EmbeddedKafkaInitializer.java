package io.github.idempotency.sample;

import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.aot.AbstractAotProcessor;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.Profiles;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

/**
 * Starts an in-process Kafka broker (three partitions per topic) before any Kafka client
 * is created, and points {@code spring.kafka.bootstrap-servers} at it, so the sample needs
 * no installed server. Skipped on the {@code servers} profile, which names a real broker,
 * and while the application is processed ahead of time (the build starts no broker).
 * Registered in {@code META-INF/spring.factories}.
 */
public class EmbeddedKafkaInitializer implements ApplicationContextInitializer<ConfigurableApplicationContext> {

	private static final Log logger = LogFactory.getLog(EmbeddedKafkaInitializer.class);

	@Override
	public void initialize(ConfigurableApplicationContext context) {
		ConfigurableEnvironment environment = context.getEnvironment();
		if (environment.acceptsProfiles(Profiles.of("servers")) || Boolean.getBoolean(AbstractAotProcessor.AOT_PROCESSING)) {
			return;
		}
		EmbeddedKafkaKraftBroker broker = new EmbeddedKafkaKraftBroker(1, 3, PaymentConsumer.TOPIC);
		broker.afterPropertiesSet();
		logger.info("Started an in-process Kafka broker at " + broker.getBrokersAsString());
		environment.getPropertySources()
			.addFirst(new MapPropertySource("embeddedKafka",
					Map.of("spring.kafka.bootstrap-servers", broker.getBrokersAsString())));
		// destroyed after the listener containers stopped, so no client outlives the broker
		context.getBeanFactory().registerSingleton("embeddedKafkaBroker", broker);
		((DefaultListableBeanFactory) context.getBeanFactory()).registerDisposableBean("embeddedKafkaBroker", broker);
	}

}
