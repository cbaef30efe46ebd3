package io.github.idempotency.store.r2dbc;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

import io.r2dbc.spi.ConnectionFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ReactiveClaimResult;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.test.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The r2dbc store's cleanup, on PostgreSQL and on MariaDB: every expired record goes, a
 * batch per statement, and no live one.
 */
class R2dbcCleanupTest {

	@ParameterizedTest
	@ValueSource(strings = { "postgresql", "mariadb" })
	void theCleanupDeletesEveryExpiredRecordInBatchesAndNoLiveOne(String database) {
		ConnectionFactory connectionFactory = database.equals("postgresql") ? R2dbcTestDatabases.postgres()
				: R2dbcTestDatabases.mariaDb();
		// far in the future: every other test's records have expired by then, and go too
		MutableClock clock = new MutableClock(Instant.parse("2100-01-01T00:00:00Z"));
		R2dbcIdempotencyStore store = new R2dbcIdempotencyStore(connectionFactory, "idempotency_record",
				Duration.ofSeconds(5), clock);
		String workflow = "cleanup-" + UUID.randomUUID();
		List<ReactiveClaimResult> finished = Flux.range(0, 5)
			.concatMap((i) -> store.claim(request(workflow, "done-" + i)))
			.concatMap((claim) -> claim.acquiredHandle().complete("{}").thenReturn(claim))
			.collectList()
			.block();
		assertThat(finished).hasSize(5);
		clock.advance(Duration.ofHours(2));
		StepVerifier.create(store.claim(request(workflow, "live")))
			.assertNext((claim) -> assertThat(claim.outcome()).isEqualTo(ClaimOutcome.ACQUIRED))
			.verifyComplete();
		StepVerifier.create(store.deleteExpired(2))
			.assertNext((deleted) -> assertThat(deleted).isGreaterThanOrEqualTo(5))
			.verifyComplete();
		for (int i = 0; i < 5; i++) {
			StepVerifier.create(store.delete(new RecordId(workflow, "done-" + i))).expectNext(false).verifyComplete();
		}
		StepVerifier.create(store.find(new RecordId(workflow, "live")))
			.assertNext((record) -> assertThat(record.owner()).isEqualTo("owner-live"))
			.verifyComplete();
	}

	private static ClaimRequest request(String workflow, String key) {
		return new ClaimRequest(new RecordId(workflow, key), "owner-" + key, null, Duration.ofSeconds(30),
				Duration.ofHours(1));
	}

}
