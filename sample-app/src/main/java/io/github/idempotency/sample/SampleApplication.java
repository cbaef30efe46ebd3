package io.github.idempotency.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * A payment consumer protected by the idempotency starter: at start it publishes a burst
 * of payment events with duplicates and logs how many payments were charged.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class SampleApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

}
