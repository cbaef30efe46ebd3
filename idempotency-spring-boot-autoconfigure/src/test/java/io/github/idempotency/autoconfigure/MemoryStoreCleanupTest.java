package io.github.idempotency.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import io.github.idempotency.IdempotencyTemplate;
import io.github.idempotency.IdempotentRequest;
import io.github.idempotency.metrics.IdempotencyMeters;
import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.store.ExpiredRecordsCleaner;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.test.MutableClock;
import io.github.idempotency.testfixtures.UnreachableIdempotencyStore;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The memory store's expired records are dropped on a schedule, so the store holds only
 * the records within their retention.
 */
@ExtendWith(OutputCaptureExtension.class)
class MemoryStoreCleanupTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, IdempotencyAutoConfiguration.class))
		.withPropertyValues("idempotency.backend=memory");

	@Test
	void theMemoryStoreIsCleanedUpEveryMinute() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(ExpiredRecordsCleaner.class);
			ExpiredRecordsCleaner cleaner = context.getBean(ExpiredRecordsCleaner.class);
			assertThat(cleaner.isRunning()).isTrue();
			assertThat(cleaner.getInterval()).isEqualTo(Duration.ofMinutes(1));
		});
	}

	@Test
	void theIntervalIsAProperty() {
		this.runner.withPropertyValues("idempotency.memory.cleanup-interval=5s")
			.run((context) -> assertThat(context.getBean(ExpiredRecordsCleaner.class).getInterval())
				.isEqualTo(Duration.ofSeconds(5)));
	}

	@Test
	void zeroTurnsTheCleanupOff() {
		this.runner.withPropertyValues("idempotency.memory.cleanup-interval=0")
			.run((context) -> assertThat(context).doesNotHaveBean(ExpiredRecordsCleaner.class));
	}

	@Test
	void anotherStoreHasNoMemoryCleanup() {
		this.runner.withBean(IdempotencyStore.class, () -> new UnreachableIdempotencyStore("redis"))
			.run((context) -> assertThat(context).doesNotHaveBean(ExpiredRecordsCleaner.class));
	}

	@Test
	void theCleanerDropsTheExpiredRecordsOfTheStoreAndKeepsTheOthers() {
		this.runner.run((context) -> {
			IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
			template.execute(IdempotentRequest.of("payment", "short").withRetention(Duration.ofMillis(1)),
					String.class, () -> "expires at once");
			template.execute(IdempotentRequest.of("payment", "kept"), String.class, () -> "kept for 7 days");
			ExpiredRecordsCleaner cleaner = context.getBean(ExpiredRecordsCleaner.class);
			await().atMost(Duration.ofSeconds(5)).until(() -> cleaner.cleanUp() == 1);
			assertThat(cleaner.cleanUp()).isZero();
			assertThat(template.execute(IdempotentRequest.of("payment", "kept"), String.class, () -> "ran again"))
				.isEqualTo("kept for 7 days");
		});
	}

	@Test
	void eachRunIsCountedAndTimedAndLoggedWhenItRemovedRecords(CapturedOutput output) {
		this.runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run((context) -> {
			IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
			template.execute(IdempotentRequest.of("payment", "short").withRetention(Duration.ofMillis(1)),
					String.class, () -> "expires at once");
			ExpiredRecordsCleaner cleaner = context.getBean(ExpiredRecordsCleaner.class);
			await().atMost(Duration.ofSeconds(5)).until(() -> cleaner.cleanUp() == 1);
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			Timer runs = registry.get(IdempotencyMeters.CLEANUP).tag("backend", "memory").timer();
			assertThat(runs.count()).isGreaterThanOrEqualTo(1);
			assertThat(registry.get(IdempotencyMeters.CLEANUP_REMOVED).tag("backend", "memory").counter().count())
				.isEqualTo(1);
			assertThat(output).containsOnlyOnce("Removed 1 expired idempotency records from the memory store in ");
		});
	}

	/**
	 * A run longer than the interval means records expire about as fast as the cleanup
	 * removes them: said in a WARN line, which names what to change.
	 */
	@Test
	void aRunLongerThanTheIntervalIsAWarning(CapturedOutput output) {
		MutableClock clock = new MutableClock(Instant.parse("2026-11-28T00:00:00Z"));
		Duration[] runTime = { Duration.ofSeconds(59), Duration.ofSeconds(61) };
		int[] run = { 0 };
		ExpiredRecordsCleaner cleaner = new ExpiredRecordsCleaner("jdbc", () -> {
			clock.advance(runTime[run[0]++]);
			return 120_000;
		}, Duration.ofMinutes(1), IdempotencyObserver.NONE, clock);
		cleaner.cleanUp();
		assertThat(output).contains("Removed 120000 expired idempotency records from the jdbc store in 59.000 s")
			.doesNotContain("WARN");
		cleaner.cleanUp();
		assertThat(output).containsOnlyOnce("WARN")
			.contains("The jdbc store's cleanup removed 120000 expired idempotency records in 61.000 s (1967 "
					+ "records/s), longer than its interval of PT1M: records expire about as fast as it removes them,"
					+ " or faster")
			.contains("max-rows-per-second");
	}

	@Test
	void theCleanupRunsRepeatedlyUntilStopped() throws InterruptedException {
		CountDownLatch threeRuns = new CountDownLatch(3);
		AtomicInteger runs = new AtomicInteger();
		ExpiredRecordsCleaner cleaner = new ExpiredRecordsCleaner("memory", () -> {
			runs.incrementAndGet();
			threeRuns.countDown();
			if (runs.get() == 1) {
				throw new IllegalStateException("a failed run does not end the schedule");
			}
			return 2;
		}, Duration.ofMillis(5));
		cleaner.start();
		try {
			assertThat(cleaner.isRunning()).isTrue();
			assertThat(threeRuns.await(5, TimeUnit.SECONDS)).isTrue();
		}
		finally {
			cleaner.stop();
		}
		assertThat(cleaner.isRunning()).isFalse();
	}

}
