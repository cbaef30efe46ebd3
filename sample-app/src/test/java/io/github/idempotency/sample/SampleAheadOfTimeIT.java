package io.github.idempotency.sample;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the packaged sample, processed ahead of time by the build
 * ({@code spring-boot:process-aot}), in AOT mode on the JVM
 * ({@code -Dspring.aot.enabled=true}) and waits for the summary line of its burst.
 */
class SampleAheadOfTimeIT {

	private static final String SUMMARY = "published 1000 events (250 duplicates): 750 payments charged, "
			+ "250 duplicates suppressed";

	private final List<String> output = Collections.synchronizedList(new ArrayList<>());

	private Process sample;

	@Test
	void theAheadOfTimeProcessedSampleChargesEveryPaymentOnce() throws Exception {
		Path jar = Path.of(System.getProperty("sample.jar"));
		assertThat(jar).exists();
		Path java = Path.of(System.getProperty("java.home"), "bin", "java");
		this.sample = new ProcessBuilder(java.toString(), "-Dspring.aot.enabled=true", "-jar", jar.toString(),
				"--server.port=0")
			.redirectErrorStream(true)
			.start();
		CompletableFuture<String> summary = new CompletableFuture<>();
		Thread reader = new Thread(() -> read(summary), "sample-output");
		reader.setDaemon(true);
		reader.start();
		// the sample runs until it is stopped: the summary line (or its exit) ends the wait
		String line = summary.get(3, TimeUnit.MINUTES);
		assertThat(line).as(String.join("\n", this.output)).contains(SUMMARY);
		assertThat(this.output).anyMatch((logged) -> logged.contains("Starting AOT-processed SampleApplication"));
		assertThat(this.output).noneMatch((logged) -> logged.contains(" ERROR "));
	}

	private void read(CompletableFuture<String> summary) {
		try (BufferedReader lines = new BufferedReader(
				new InputStreamReader(this.sample.getInputStream(), StandardCharsets.UTF_8))) {
			String line;
			while ((line = lines.readLine()) != null) {
				this.output.add(line);
				if (line.contains(SUMMARY)) {
					summary.complete(line);
				}
			}
			summary.complete("the sample exited with " + this.sample.waitFor());
		}
		catch (IOException | InterruptedException ex) {
			summary.completeExceptionally(ex);
		}
	}

	@AfterEach
	void stopTheSample() throws Exception {
		if (this.sample != null) {
			this.sample.destroy();
			if (!this.sample.waitFor(60, TimeUnit.SECONDS)) {
				this.sample.destroyForcibly().waitFor();
			}
		}
	}

}
