package io.github.idempotency;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The core stands on Spring Framework alone: no Spring Boot, no broker, no store
 * technology in its sources, so that a non-Boot application or a third-party store
 * compiles against it without them.
 */
class LayeringTest {

	private static final Path SOURCES = Path.of("src/main/java");

	private static final List<String> FORBIDDEN = List.of("org.springframework.boot", "org.apache.kafka",
			"org.springframework.kafka", "org.springframework.amqp", "com.rabbitmq", "org.springframework.jdbc",
			"org.springframework.data.redis", "io.lettuce", "io.github.idempotency.store.jdbc",
			"io.github.idempotency.store.redis", "io.github.idempotency.store.hybrid",
			"io.github.idempotency.autoconfigure", "io.github.idempotency.actuate", "io.github.idempotency.kafka",
			"io.github.idempotency.amqp");

	@Test
	void coreSourcesNameNeitherSpringBootNorABrokerNorAStoreTechnology() {
		List<Path> sources = sources();
		assertThat(sources).as("core sources").isNotEmpty();
		for (Path source : sources) {
			String text = read(source);
			for (String forbidden : FORBIDDEN) {
				assertThat(text).as(source + " names " + forbidden).doesNotContain(forbidden + ".");
			}
		}
	}

	private static List<Path> sources() {
		try (Stream<Path> files = Files.walk(SOURCES)) {
			return files.filter((file) -> file.toString().endsWith(".java")).toList();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static String read(Path source) {
		try {
			return Files.readString(source);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
