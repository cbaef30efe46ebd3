package io.github.idempotency.store;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import io.github.idempotency.metrics.IdempotencyMeters;
import io.github.idempotency.metrics.MicrometerIdempotencyObserver;
import io.github.idempotency.observe.IdempotencyObserver;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each cleanup run is reported to the observer: the records removed and the time taken,
 * as the Micrometer meters count and time them.
 */
class ExpiredRecordsCleanerTest {

	@Test
	void eachRunIsReportedWithTheRecordsItRemoved() {
		List<String> runs = new CopyOnWriteArrayList<>();
		IdempotencyObserver observer = new IdempotencyObserver() {

			@Override
			public void onCleanup(String backend, int removed, long nanos) {
				assertThat(nanos).isNotNegative();
				runs.add(backend + ":" + removed);
			}

		};
		int[] removed = { 42, 0 };
		int[] run = { 0 };
		ExpiredRecordsCleaner cleaner = new ExpiredRecordsCleaner("jdbc", () -> removed[run[0]++], Duration.ofHours(1),
				observer);
		assertThat(cleaner.cleanUp()).isEqualTo(42);
		assertThat(cleaner.cleanUp()).isZero();
		assertThat(runs).containsExactly("jdbc:42", "jdbc:0");
	}

	@Test
	void theMicrometerObserverCountsTheRecordsAndTimesTheRuns() {
		SimpleMeterRegistry registry = new SimpleMeterRegistry();
		ExpiredRecordsCleaner cleaner = new ExpiredRecordsCleaner("jdbc", () -> 1500, Duration.ofHours(1),
				new MicrometerIdempotencyObserver(registry, "hybrid"));
		cleaner.cleanUp();
		cleaner.cleanUp();
		assertThat(registry.get(IdempotencyMeters.CLEANUP_REMOVED).tag("backend", "jdbc").counter().count())
			.isEqualTo(3000);
		assertThat(registry.get(IdempotencyMeters.CLEANUP).tag("backend", "jdbc").timer().count()).isEqualTo(2);
	}

	@Test
	void anObserverThatThrowsChangesNothing() {
		ExpiredRecordsCleaner cleaner = new ExpiredRecordsCleaner("memory", () -> 3, Duration.ofHours(1),
				new IdempotencyObserver() {

					@Override
					public void onCleanup(String backend, int removed, long nanos) {
						throw new IllegalStateException("broken observer");
					}

				});
		assertThat(cleaner.cleanUp()).isEqualTo(3);
	}

}
