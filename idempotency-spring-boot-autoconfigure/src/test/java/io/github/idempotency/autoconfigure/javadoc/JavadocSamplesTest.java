package io.github.idempotency.autoconfigure.javadoc;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every code sample in the published modules' javadoc ({@code <pre class="code">}) is
 * code that compiles: each of its lines, but for a body left out as {@code ...}, is a line
 * of {@link JavadocSamples}.
 */
class JavadocSamplesTest {

	private static final Pattern SAMPLE = Pattern.compile("<pre class=\"code\">(.*?)</pre>", Pattern.DOTALL);

	private static final List<String> PUBLISHED = List.of("idempotency-core", "idempotency-test", "idempotency-jdbc",
			"idempotency-redis", "idempotency-kafka", "idempotency-amqp", "idempotency-spring-boot-autoconfigure");

	@Test
	void everyJavadocSampleLineIsCompiledCode() throws IOException {
		Path root = Path.of("..");
		List<String> compiled = Files
			.readAllLines(Path.of("src/test/java/io/github/idempotency/autoconfigure/javadoc/JavadocSamples.java"))
			.stream()
			.map(String::trim)
			.toList();
		List<String> missing = new ArrayList<>();
		int samples = 0;
		for (String module : PUBLISHED) {
			try (Stream<Path> sources = Files.walk(root.resolve(module).resolve("src/main/java"))) {
				for (Path source : sources.filter((path) -> path.toString().endsWith(".java")).toList()) {
					Matcher matcher = SAMPLE.matcher(Files.readString(source));
					while (matcher.find()) {
						samples++;
						for (String line : matcher.group(1).split("\n")) {
							String code = unescape(line.replaceFirst("^\\s*\\*", "").trim());
							if (!code.isEmpty() && !code.contains("...")
									&& compiled.stream().noneMatch((candidate) -> candidate.contains(code))) {
								missing.add(root.relativize(source) + ": " + code);
							}
						}
					}
				}
			}
		}
		assertThat(samples).as("javadoc samples found").isGreaterThanOrEqualTo(8);
		assertThat(missing).as("javadoc sample lines that are not in JavadocSamples").isEmpty();
	}

	private static String unescape(String html) {
		return html.replace("&#64;", "@").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
	}

}
