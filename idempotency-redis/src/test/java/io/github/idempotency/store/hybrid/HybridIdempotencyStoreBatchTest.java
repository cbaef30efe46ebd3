package io.github.idempotency.store.hybrid;

import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.test.MutableClock;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.jdbc.JdbcIdempotencyStore;
import io.github.idempotency.testservers.RedisConnections;
import io.github.idempotency.testservers.RedisServerProcess;
import io.github.idempotency.testservers.TestDatabases;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The batch steps of the hybrid store (its own redis-server, PostgreSQL behind): cached
 * duplicates answered by Redis, the misses sent to the source of truth in one call, and
 * the completions cached only once committed.
 */
class HybridIdempotencyStoreBatchTest {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration RETENTION = Duration.ofHours(1);

	private final MutableClock clock = new MutableClock(Instant.now());

	private final DataSource dataSource = TestDatabases.postgres();

	private final TransactionTemplate transactions = new TransactionTemplate(
			new DataSourceTransactionManager(this.dataSource));

	private final RecordingStore sourceOfTruth = new RecordingStore(
			new JdbcIdempotencyStore(this.dataSource, "idempotency_record", Duration.ofSeconds(5), this.clock));

	private final RedisServerProcess server = new RedisServerProcess().start();

	private final LettuceConnectionFactory connectionFactory = RedisConnections.standalone(this.server.url());

	private final HybridIdempotencyStore store = new HybridIdempotencyStore(this.sourceOfTruth,
			this.connectionFactory, "hybrid", RETENTION, this.clock);

	private final String workflow = "hybrid-batch-" + UUID.randomUUID();

	@AfterEach
	void stop() {
		this.connectionFactory.destroy();
		this.server.close();
	}

	@Test
	void cachedDuplicatesAreAnsweredByRedisAndOnlyTheMissesGoToTheSourceOfTruthInOneCall() {
		finish("d1", "\"one\"");
		finish("d2", "\"two\"");
		this.sourceOfTruth.clear();
		List<ClaimResult> results = this.store.claimAll(requests("d1", "n1", "d2", "n2", "n1"));
		assertThat(results).extracting(ClaimResult::outcome)
			.containsExactly(ClaimOutcome.DUPLICATE, ClaimOutcome.ACQUIRED, ClaimOutcome.DUPLICATE,
					ClaimOutcome.ACQUIRED, ClaimOutcome.IN_PROGRESS);
		assertThat(results.get(0).record().response()).isEqualTo("\"one\"");
		assertThat(results.get(2).record().response()).isEqualTo("\"two\"");
		assertThat(this.sourceOfTruth.calls).containsExactly("claimAll [n1, n2, n1]");
	}

	@Test
	void completeAllIsOneCallToTheSourceOfTruthAndCachesTheCompletions() {
		List<ClaimResult> claimed = this.store.claimAll(requests("a", "b"));
		this.sourceOfTruth.clear();
		assertThat(this.store.completeAll(handles(claimed), List.of("\"a\"", "\"b\""))).containsExactly(true, true);
		assertThat(this.sourceOfTruth.calls).containsExactly("completeAll 2");
		assertThat(cached("a")).isTrue();
		assertThat(cached("b")).isTrue();
		this.sourceOfTruth.clear();
		assertThat(this.store.claimAll(requests("a", "b"))).extracting((result) -> result.record().response())
			.containsExactly("\"a\"", "\"b\"");
		assertThat(this.sourceOfTruth.calls).isEmpty();
	}

	@Test
	void aBatchCompletedInATransactionIsCachedOnlyOnceItCommits() {
		this.transactions.executeWithoutResult((status) -> {
			List<ClaimResult> claimed = this.store.claimAll(requests("a", "b"));
			this.store.completeAll(handles(claimed), List.of("\"a\"", "\"b\""));
			assertThat(cached("a")).as("cached before the commit").isFalse();
		});
		assertThat(cached("a")).isTrue();
		assertThat(cached("b")).isTrue();
		this.transactions.executeWithoutResult((status) -> {
			List<ClaimResult> claimed = this.store.claimAll(requests("c", "d"));
			this.store.completeAll(handles(claimed), List.of("\"c\"", "\"d\""));
			status.setRollbackOnly();
		});
		assertThat(cached("c")).isFalse();
		assertThat(cached("d")).isFalse();
		assertThat(this.store.find(new RecordId(this.workflow, "c"))).isEmpty();
	}

	@Test
	void duplicatesReadInATransactionAreNotCachedAndOutsideOneTheyAre() {
		finish("d", "\"done\"");
		new StringRedisTemplate(this.connectionFactory).delete(this.store.key(new RecordId(this.workflow, "d")));
		this.transactions.executeWithoutResult((status) -> assertThat(this.store.claimAll(requests("d", "x")))
			.extracting(ClaimResult::outcome)
			.containsExactly(ClaimOutcome.DUPLICATE, ClaimOutcome.ACQUIRED));
		assertThat(cached("d")).isFalse();
		assertThat(this.store.claimAll(requests("d", "y"))).extracting(ClaimResult::outcome)
			.containsExactly(ClaimOutcome.DUPLICATE, ClaimOutcome.ACQUIRED);
		assertThat(cached("d")).isTrue();
	}

	private void finish(String key, String response) {
		ClaimResult claim = this.store.claim(requests(key).get(0));
		assertThat(claim.acquiredHandle().complete(response)).isTrue();
	}

	private List<ClaimRequest> requests(String... keys) {
		return Arrays.stream(keys)
			.map((key) -> new ClaimRequest(new RecordId(this.workflow, key), "owner-" + UUID.randomUUID(), null, LEASE,
					RETENTION))
			.toList();
	}

	private static List<ClaimHandle> handles(List<ClaimResult> claimed) {
		return claimed.stream().map(ClaimResult::acquiredHandle).toList();
	}

	private boolean cached(String key) {
		return Boolean.TRUE.equals(new StringRedisTemplate(this.connectionFactory)
			.hasKey(this.store.key(new RecordId(this.workflow, key))));
	}

	/**
	 * The source of truth, with its batch calls written down.
	 */
	private static final class RecordingStore implements IdempotencyStore {

		private final IdempotencyStore delegate;

		final List<String> calls = new CopyOnWriteArrayList<>();

		RecordingStore(IdempotencyStore delegate) {
			this.delegate = delegate;
		}

		void clear() {
			this.calls.clear();
		}

		@Override
		public ClaimResult claim(ClaimRequest request) {
			this.calls.add("claim " + request.id().key());
			return this.delegate.claim(request);
		}

		@Override
		public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
			this.calls.add("claimAll " + requests.stream().map((request) -> request.id().key()).toList());
			return this.delegate.claimAll(requests);
		}

		@Override
		public List<Boolean> completeAll(List<ClaimHandle> handles, List<@Nullable String> responses) {
			this.calls.add("completeAll " + handles.size());
			return this.delegate.completeAll(handles, responses);
		}

		@Override
		public Optional<IdempotencyRecord> find(RecordId id) {
			return this.delegate.find(id);
		}

		@Override
		public boolean delete(RecordId id) {
			return this.delegate.delete(id);
		}

	}

}
