package io.github.idempotency.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.IdempotencyTemplate;
import io.github.idempotency.IdempotentRequest;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.internal.DefaultIdempotencyTemplate;
import io.github.idempotency.internal.EngineSettings;
import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.observe.IdempotencyObserver;
import io.github.idempotency.internal.IdempotentOperation;
import io.github.idempotency.internal.OperationDefinition;
import io.github.idempotency.observe.StoreOperation;
import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.test.MutableClock;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.testfixtures.FailedStoreCall;
import io.github.idempotency.testservers.TestDatabases;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionCallback;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatRuntimeException;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * The jdbc store where transactions meet on one row: a claim that waited, the cleanup
 * racing a takeover, a caller's transaction that read first, a deadlock, a duplicate
 * waiting inside its transaction, a step on a locked row. Every interleaving is forced
 * with latches and by waiting until the server reports the lock wait; time moves on a
 * {@link MutableClock}. Each database (and isolation level) is a small subclass.
 */
abstract class JdbcContentionTests {

	static final String TABLE = "idempotency_contention_test";

	static final Duration LEASE = Duration.ofSeconds(30);

	private final MutableClock clock = new MutableClock(Instant.parse("2031-01-01T00:00:00Z"));

	private final ExecutorService executor = Executors.newCachedThreadPool();

	private final String prefix = UUID.randomUUID().toString();

	private final DataSource dataSource;

	private final boolean snapshotPerTransaction;

	private final JdbcIdempotencyStore store;

	private final IdempotencyEngine engine;

	JdbcContentionTests(DataSource dataSource, String platform) {
		this.dataSource = dataSource;
		this.snapshotPerTransaction = platform.equals("postgresql");
		TestDatabases.createTable(dataSource, platform, TABLE);
		this.store = new JdbcIdempotencyStore(dataSource, TABLE, Duration.ofSeconds(5), this.clock);
		this.engine = new IdempotencyEngine(this.store, JsonMapper.builder().build(),
				EngineSettings.builder()
						.leaseTtl(LEASE)
						.leaseRenewal(false)
						.retention(Duration.ofDays(1))
						.waitTimeout(Duration.ofSeconds(30))
						.build(),
				IdempotencyObserver.NONE);
	}

	/**
	 * How many statements on the test table wait for a lock now.
	 * @param jdbc a client on another connection
	 * @return the count
	 */
	abstract long lockWaits(JdbcClient jdbc);

	/**
	 * The server's id of a connection's session.
	 * @param connection the connection
	 * @return its process or thread id
	 */
	abstract long sessionId(Connection connection) throws SQLException;

	/**
	 * Ends the connections whose statements wait for a lock that session {@code holder}
	 * holds, as a server restart or a network failure would.
	 * @param jdbc a client on another connection
	 * @param holder the session holding the lock
	 * @return how many were ended
	 */
	abstract int killWaitersBehind(JdbcClient jdbc, long holder);

	/**
	 * The isolation level of the callers' transactions.
	 * @return a {@link TransactionDefinition} isolation constant
	 */
	int isolation() {
		return TransactionDefinition.ISOLATION_DEFAULT;
	}

	/**
	 * Whether a caller's transaction reads one snapshot, so that a claim in it which meets a
	 * row committed after that snapshot fails to serialize (PostgreSQL's
	 * {@code REPEATABLE READ} and {@code SERIALIZABLE}; MariaDB's locking reads see the
	 * latest row at every level).
	 */
	private boolean failsToSerialize() {
		return this.snapshotPerTransaction && (isolation() == TransactionDefinition.ISOLATION_REPEATABLE_READ
				|| isolation() == TransactionDefinition.ISOLATION_SERIALIZABLE);
	}

	@AfterEach
	void close() {
		this.executor.shutdownNow();
		this.engine.close();
	}

	@Test
	void aClaimThatWaitedBehindAnotherTransactionStampsItsLeaseAfterTheWait() throws Exception {
		RecordId id = id("waited");
		Future<ClaimResult> waiting;
		try (Connection holder = this.dataSource.getConnection()) {
			holder.setAutoCommit(false);
			inHeldTransaction(holder, (held) -> held.claim(request(id, "holder", LEASE)));
			waiting = this.executor.submit(() -> this.store.claim(request(id, "waiter", LEASE)));
			awaitLockWait();
			this.clock.advance(LEASE.plusSeconds(1));
			holder.rollback();
		}
		ClaimResult claim = waiting.get(30, TimeUnit.SECONDS);
		assertThat(claim.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(claim.record().leaseUntil()).isEqualTo(this.clock.instant().plus(LEASE));
		ClaimResult third = this.store.claim(request(id, "third", LEASE));
		assertThat(third.outcome()).as("the waiter still runs: no takeover").isEqualTo(ClaimOutcome.IN_PROGRESS);
		assertThat(claim.acquiredHandle().complete("\"once\"")).isTrue();
	}

	@Test
	void aClaimThatWaitedForAnotherTransactionsCommitAnswersTheCommittedRecord() throws Exception {
		// on PostgreSQL the claim's statement cannot see a row committed after it began: it
		// reads the row again
		RecordId id = id("committed");
		Future<ClaimResult> waiting;
		try (Connection holder = this.dataSource.getConnection()) {
			holder.setAutoCommit(false);
			inHeldTransaction(holder, (held) -> held.claim(request(id, "holder", LEASE)));
			waiting = this.executor.submit(() -> this.store.claim(request(id, "waiter", LEASE)));
			awaitLockWait();
			holder.commit();
		}
		ClaimResult claim = waiting.get(30, TimeUnit.SECONDS);
		assertThat(claim.outcome()).isEqualTo(ClaimOutcome.IN_PROGRESS);
		assertThat(claim.record().owner()).isEqualTo("holder");
	}

	@Test
	void aBatchClaimInACallersTransactionThatWaitedForAnotherTransactionsCommitAnswersTheCommittedRecord()
			throws Exception {
		// on PostgreSQL the batch statement neither inserts the row nor sees it: it answers one
		// row of NULLs, and the claim reads the row again on its own
		RecordId id = id("committed-in-batch");
		Future<List<ClaimResult>> waiting;
		try (Connection holder = this.dataSource.getConnection()) {
			holder.setAutoCommit(false);
			boolean completed = inHeldTransaction(holder,
					(held) -> held.claim(request(id, "holder", LEASE)).acquiredHandle().complete("\"stored\""));
			assertThat(completed).isTrue();
			waiting = this.executor.submit(() -> transactions()
				.execute((status) -> this.store.claimAll(List.of(request(id, "waiter", LEASE)))));
			awaitLockWait();
			holder.commit();
		}
		if (failsToSerialize()) {
			// the caller's transaction cannot see the row: the call fails to be retried
			assertThat(waiting).failsWithin(Duration.ofSeconds(30))
				.withThrowableOfType(ExecutionException.class)
				.withCauseInstanceOf(IdempotencyInProgressException.class);
			waiting = this.executor.submit(() -> transactions()
				.execute((status) -> this.store.claimAll(List.of(request(id, "waiter", LEASE)))));
		}
		List<ClaimResult> claims = waiting.get(30, TimeUnit.SECONDS);
		assertThat(claims).singleElement().satisfies((claim) -> {
			assertThat(claim.outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
			assertThat(claim.record().response()).isEqualTo("\"stored\"");
		});
	}

	@Test
	void aBatchClaimOfNewKeysThatWaitedForAnotherTransactionsCommitAnswersTheCommittedRecordAndClaimsTheRest()
			throws Exception {
		// the batch's insert waits for the row the holder inserted, then meets it as committed
		RecordId committed = id("committed-before-batch");
		RecordId fresh = id("fresh-in-batch");
		Future<List<ClaimResult>> waiting;
		try (Connection holder = this.dataSource.getConnection()) {
			holder.setAutoCommit(false);
			boolean completed = inHeldTransaction(holder,
					(held) -> held.claim(request(committed, "holder", LEASE)).acquiredHandle().complete("\"stored\""));
			assertThat(completed).isTrue();
			waiting = this.executor.submit(() -> this.store
				.claimAll(List.of(request(committed, "waiter", LEASE), request(fresh, "waiter-fresh", LEASE))));
			awaitLockWait();
			holder.commit();
		}
		List<ClaimResult> claims = waiting.get(30, TimeUnit.SECONDS);
		assertThat(claims.get(0).outcome()).isEqualTo(ClaimOutcome.DUPLICATE);
		assertThat(claims.get(0).record().response()).isEqualTo("\"stored\"");
		assertThat(claims.get(1).outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		assertThat(this.store.find(fresh).orElseThrow().owner()).isEqualTo("waiter-fresh");
		assertThat(this.store.find(committed).orElseThrow().owner()).isEqualTo("holder");
	}

	@Test
	void theCleanupSkipsARecordATakeoverHoldsWithoutWaitingAndNeverDeletesIt() throws Exception {
		RecordId id = id("reclaimed");
		ClaimRequest old = new ClaimRequest(id, "old", null, LEASE, Duration.ofMinutes(1));
		this.store.claim(old).acquiredHandle().complete("\"old\"");
		this.clock.advance(Duration.ofHours(1));
		transactions().executeWithoutResult((status) -> {
			ClaimResult takeover = this.store.claim(request(id, "new", LEASE));
			assertThat(takeover.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
			takeover.acquiredHandle().complete("\"new\"");
			// the takeover's transaction still holds the row: a cleanup that waited for it
			// would end in the lock timeout instead (and, retried, fail)
			Future<Integer> deleting = this.executor.submit(() -> this.store.deleteExpired(100));
			try {
				deleting.get(30, TimeUnit.SECONDS);
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});
		assertThat(this.store.find(id)).hasValueSatisfying((record) -> {
			assertThat(record.owner()).isEqualTo("new");
			assertThat(record.response()).isEqualTo("\"new\"");
		});
	}

	@Test
	void aClaimInACallersTransactionThatReadBeforeFindsTheResultCommittedSince() throws Throwable {
		RecordId id = id("snapshot");
		ClaimHandle first = this.store.claim(request(id, "first", LEASE)).acquiredHandle();
		AtomicBoolean completed = new AtomicBoolean();
		TransactionCallback<Object> call = (status) -> {
			JdbcClient.create(this.dataSource).sql("SELECT COUNT(*) FROM " + TABLE).query(Long.class).single();
			try {
				if (completed.compareAndSet(false, true)) {
					assertThat(this.executor.submit(() -> first.complete("\"stored\"")).get(30, TimeUnit.SECONDS))
						.isTrue();
				}
				return this.engine.execute(operation(), id.key(), null, () -> "ran again");
			}
			catch (Throwable ex) {
				throw new IllegalStateException(ex);
			}
		};
		if (failsToSerialize()) {
			// the caller's transaction cannot see the result: the call fails to be retried,
			// and the retry, in a transaction of its own, is answered with it
			assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> transactions().execute(call))
				.withCauseInstanceOf(IdempotencyInProgressException.class);
		}
		assertThat(transactions().execute(call)).isEqualTo("stored");
	}

	/**
	 * How a caller's transaction claims its second key, the claim that closes the cycle: on
	 * its own, or as one element of a batch beside a key of its own.
	 */
	enum SecondClaim {

		SINGLE, BATCH_ELEMENT

	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(SecondClaim.class)
	void aDeadlockBetweenTwoCallersTransactionsEndsOneCallRetryableAndTheOtherRuns(SecondClaim shape)
			throws Exception {
		RecordId a = id("deadlock-a");
		RecordId b = id("deadlock-b");
		CountDownLatch aClaimed = new CountDownLatch(1);
		CountDownLatch bClaimed = new CountDownLatch(1);
		Future<Object> first = this.executor.submit(() -> inTransaction(a, () -> {
			aClaimed.countDown();
			bClaimed.await();
			return claimSecond(shape, b, "deadlock-first-own", "first");
		}));
		Future<Object> second = this.executor.submit(() -> inTransaction(b, () -> {
			bClaimed.countDown();
			aClaimed.await();
			awaitLockWait();
			return claimSecond(shape, a, "deadlock-second-own", "second");
		}));
		List<String> ran = new ArrayList<>();
		for (Future<Object> call : List.of(first, second)) {
			try {
				call.get(60, TimeUnit.SECONDS);
				ran.add((call == first) ? "first" : "second");
			}
			catch (java.util.concurrent.ExecutionException ex) {
				assertThat(ex).cause()
					.isInstanceOf(IdempotencyInProgressException.class)
					.hasRootCauseInstanceOf(java.sql.SQLException.class);
			}
		}
		assertThat(ran).as("one deadlock victim").hasSize(1);
		assertThat(this.store.find(a).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(this.store.find(b).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
		if (shape == SecondClaim.BATCH_ELEMENT) {
			String victim = ran.contains("first") ? "second" : "first";
			assertThat(this.store.find(id("deadlock-" + ran.get(0) + "-own")).orElseThrow().status())
				.isEqualTo(RecordStatus.COMPLETED);
			assertThat(this.store.find(id("deadlock-" + victim + "-own"))).as("rolled back with the victim")
				.isEmpty();
		}
	}

	/**
	 * Claims {@code other} inside the running transaction, as {@code shape} says, beside
	 * {@code own} in a batch.
	 */
	private Object claimSecond(SecondClaim shape, RecordId other, String own, String result) {
		if (shape == SecondClaim.SINGLE) {
			return inTransactionBody(other, () -> result);
		}
		new DefaultIdempotencyTemplate(this.engine).executeAll(
				List.of(IdempotentRequest.of(this.prefix, other.key()), IdempotentRequest.of(this.prefix, own)),
				String.class, (request) -> result);
		return result;
	}

	@Test
	void aDuplicateInsideACallersTransactionEndsAtOnceAndNeverBlocksTheOriginal() throws Exception {
		RecordId id = id("blocking");
		ClaimHandle original = this.store.claim(request(id, "original", LEASE)).acquiredHandle();
		Future<Object> duplicate = this.executor.submit(() -> inTransaction(id, () -> "ran twice"));
		assertThatExceptionOfType(java.util.concurrent.ExecutionException.class)
			.isThrownBy(() -> duplicate.get(20, TimeUnit.SECONDS))
			.withCauseInstanceOf(IdempotencyInProgressException.class);
		assertThat(original.complete("\"done\"")).isTrue();
	}

	@Test
	void aBatchInACallersTransactionThatMeetsARowHeldPastTheLockTimeoutEndsTheCallRetryablyAndClaimsNone()
			throws Exception {
		JdbcIdempotencyStore impatient = new JdbcIdempotencyStore(this.dataSource, TABLE, Duration.ofSeconds(1),
				this.clock);
		RecordId held = id("held-beside-a-batch");
		RecordId fresh = id("fresh-beside-a-held-row");
		try (Connection holder = this.dataSource.getConnection()) {
			holder.setAutoCommit(false);
			inHeldTransaction(holder, (store) -> store.claim(request(held, "holder", LEASE)));
			assertTimeoutPreemptively(Duration.ofSeconds(20),
					() -> assertThatExceptionOfType(IdempotencyInProgressException.class)
						.isThrownBy(() -> transactions().execute((status) -> impatient
							.claimAll(List.of(request(fresh, "waiter", LEASE), request(held, "waiter", LEASE))))));
			holder.rollback();
		}
		assertThat(this.store.find(fresh)).as("rolled back with the caller's transaction").isEmpty();
		assertThat(this.store.find(held)).isEmpty();
	}

	@Test
	void aStepOnARowAnotherTransactionHoldsIsBoundedByTheLockTimeout() throws Exception {
		JdbcIdempotencyStore impatient = new JdbcIdempotencyStore(this.dataSource, TABLE, Duration.ofSeconds(1),
				this.clock);
		RecordId id = id("locked");
		ClaimHandle claim = impatient.claim(request(id, "owner", LEASE)).acquiredHandle();
		try (Connection locker = this.dataSource.getConnection()) {
			lockRow(locker, id);
			assertTimeoutPreemptively(Duration.ofSeconds(20),
					() -> assertThatRuntimeException().isThrownBy(claim::renew));
			locker.rollback();
		}
		assertThat(claim.complete("\"done\"")).isTrue();
	}

	@Test
	void aResultWhoseRowAnotherTransactionHoldsPastTheLockTimeoutIsStoredOnARetry() throws Throwable {
		JdbcIdempotencyStore impatient = new JdbcIdempotencyStore(this.dataSource, TABLE, Duration.ofSeconds(1),
				this.clock);
		// held until the completion gave up once
		chargeOnceWhileTheRowIsHeld(impatient, "held", this::rollBackOnceFailed);
	}

	@Test
	void aResultWhoseConnectionIsLostWhileItIsBeingStoredIsStoredOnARetry() throws Throwable {
		// a lock timeout the test never reaches: the completion fails because its connection is gone
		JdbcIdempotencyStore patient = new JdbcIdempotencyStore(this.dataSource, TABLE, Duration.ofSeconds(30),
				this.clock);
		CompletableFuture<Integer> killed = new CompletableFuture<>();
		chargeOnceWhileTheRowIsHeld(patient, "lost", (locker, completionFailed) -> {
			long holder = sessionId(locker);
			// the completion waits on the held row, and its connection is ended there
			killed.completeAsync(() -> {
				try {
					awaitLockWait();
					int ended = killWaitersBehind(JdbcClient.create(this.dataSource), holder);
					completionFailed.await();
					locker.rollback();
					return ended;
				}
				catch (Exception ex) {
					throw new IllegalStateException(ex);
				}
			}, this.executor);
		});
		assertThat(killed).succeedsWithin(Duration.ofSeconds(10)).isEqualTo(1);
	}

	/**
	 * Charges {@code key} once through {@code store}: while the charge runs, another
	 * transaction of {@code locker} locks the claim's committed row, and {@code whileHeld}
	 * decides how the completion fails and when the lock goes. The result is stored on a
	 * retry, so the redelivery after the lease is answered, not run.
	 */
	private void chargeOnceWhileTheRowIsHeld(JdbcIdempotencyStore store, String key, RowHolder whileHeld)
			throws Throwable {
		FailedStoreCall completionFailed = new FailedStoreCall(StoreOperation.COMPLETE);
		RecordId id = id(key);
		AtomicInteger runs = new AtomicInteger();
		try (IdempotencyEngine engine = observedEngine(store, completionFailed);
				Connection locker = this.dataSource.getConnection()) {
			IdempotentOperation operation = operation(engine);
			Object result = engine.execute(operation, id.key(), null, () -> {
				runs.incrementAndGet();
				lockRow(locker, id);
				whileHeld.hold(locker, completionFailed);
				return "charged";
			});
			assertThat(result).isEqualTo("charged");
			assertThat(completionFailed.happened()).isTrue();
			this.clock.advance(LEASE.plusMinutes(1));
			assertThat(engine.execute(operation, id.key(), null, () -> "charged again")).isEqualTo("charged");
		}
		assertThat(runs).hasValue(1);
		assertThat(this.store.find(id).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
	}

	/** What happens while another transaction holds the row of a charge's claim. */
	@FunctionalInterface
	private interface RowHolder {

		void hold(Connection locker, FailedStoreCall completionFailed) throws Exception;

	}

	@Test
	void theResultsOfABatchOneOfWhoseRowsAnotherTransactionHoldsAreStoredOnARetry() throws Throwable {
		JdbcIdempotencyStore impatient = new JdbcIdempotencyStore(this.dataSource, TABLE, Duration.ofSeconds(1),
				this.clock);
		FailedStoreCall completionFailed = new FailedStoreCall(StoreOperation.COMPLETE);
		List<String> runs = new CopyOnWriteArrayList<>();
		List<IdempotentRequest> batch = List.of(IdempotentRequest.of(this.prefix, "a"),
				IdempotentRequest.of(this.prefix, "b"), IdempotentRequest.of(this.prefix, "c"));
		try (IdempotencyEngine engine = observedEngine(impatient, completionFailed);
				Connection locker = this.dataSource.getConnection()) {
			IdempotencyTemplate template = new DefaultIdempotencyTemplate(engine);
			List<String> results = template.executeAll(batch, String.class, (request) -> {
				runs.add((String) request.key());
				if (runs.size() == batch.size()) {
					// the claims committed; one row held by another transaction past the completion's lock timeout
					lockRow(locker, id("b"));
					rollBackOnceFailed(locker, completionFailed);
				}
				return "charged " + request.key();
			});
			assertThat(results).containsExactly("charged a", "charged b", "charged c");
			assertThat(completionFailed.happened()).isTrue();
			this.clock.advance(LEASE.plusMinutes(1));
			assertThat(template.executeAll(batch, String.class, (request) -> "charged again"))
				.containsExactly("charged a", "charged b", "charged c");
		}
		assertThat(runs).containsExactly("a", "b", "c");
		for (String key : List.of("a", "b", "c")) {
			assertThat(this.store.find(id(key)).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
		}
	}

	@Test
	void aBatchCompletionLocksItsRowsInKeyOrderWhateverTheOrderOfItsHandles() throws Exception {
		// a batch claim locks the rows it finds in key order: a completion locking in another
		// order could hold one row while waiting for the other, and deadlock with it
		List<ClaimHandle> handles = this.store
			.claimAll(List.of(request(id("b"), "owner-b", LEASE), request(id("a"), "owner-a", LEASE)))
			.stream()
			.map(ClaimResult::acquiredHandle)
			.toList();
		try (Connection locker = this.dataSource.getConnection()) {
			lockRow(locker, id("a"));
			Future<List<Boolean>> completion = this.executor
				.submit(() -> this.store.completeAll(handles, List.of("\"b\"", "\"a\"")));
			awaitLockWait();
			assertThat(lockWithoutWaiting(id("b"))).as("the row after the one it waits for is still free").isTrue();
			locker.rollback();
			assertThat(completion.get(20, TimeUnit.SECONDS)).containsExactly(true, true);
		}
		assertThat(this.store.find(id("b")).orElseThrow().response()).isEqualTo("\"b\"");
	}

	/**
	 * Whether the row of {@code id} could be locked at once, on a connection of its own.
	 */
	private boolean lockWithoutWaiting(RecordId id) {
		try {
			JdbcClient.create(this.dataSource)
				.sql("SELECT status FROM " + TABLE
						+ " WHERE workflow = :workflow AND idempotency_key = :key FOR UPDATE NOWAIT")
				.param("workflow", id.workflow())
				.param("key", id.key())
				.query(String.class)
				.single();
			return true;
		}
		catch (DataAccessException ex) {
			return false;
		}
	}

	/**
	 * Rolls {@code locker}'s transaction back, on another thread, once a completion failed.
	 */
	private void rollBackOnceFailed(Connection locker, FailedStoreCall completionFailed) {
		this.executor.execute(() -> {
			try {
				completionFailed.await();
				locker.rollback();
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});
	}

	/**
	 * Locks the row of {@code id} in a transaction of {@code locker}, left open.
	 */
	private static void lockRow(Connection locker, RecordId id) {
		try {
			locker.setAutoCommit(false);
		}
		catch (SQLException ex) {
			throw new IllegalStateException(ex);
		}
		JdbcClient.create(new SingleConnectionDataSource(locker, true))
			.sql("SELECT status FROM " + TABLE + " WHERE workflow = :workflow AND idempotency_key = :key FOR UPDATE")
			.param("workflow", id.workflow())
			.param("key", id.key())
			.query(String.class)
			.single();
	}

	private Object inTransaction(RecordId id, IdempotencyEngine.Action body) {
		return transactions().execute((status) -> inTransactionBody(id, body));
	}

	private Object inTransactionBody(RecordId id, IdempotencyEngine.Action body) {
		try {
			return this.engine.execute(operation(), id.key(), null, body);
		}
		catch (RuntimeException ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw new IllegalStateException(ex);
		}
	}

	private TransactionTemplate transactions() {
		TransactionTemplate template = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
		template.setIsolationLevel(isolation());
		return template;
	}

	private IdempotentOperation operation() {
		return operation(this.engine);
	}

	private IdempotentOperation operation(IdempotencyEngine engine) {
		return engine.prepare(OperationDefinition.of(this.prefix, String.class).fingerprinted(false).build());
	}

	/**
	 * An engine on {@code store} that rejects a key in progress at once and tells
	 * {@code observer} of its store calls.
	 */
	private static IdempotencyEngine observedEngine(JdbcIdempotencyStore store, IdempotencyObserver observer) {
		return new IdempotencyEngine(store, JsonMapper.builder().build(), EngineSettings.builder()
				.leaseTtl(LEASE)
				.leaseRenewal(false)
				.retention(Duration.ofDays(1))
				.onInProgress(InProgressPolicy.REJECT)
				.waitTimeout(Duration.ZERO)
				.build(),
				observer);
	}

	/**
	 * Runs {@code steps} on a store whose statements run in {@code holder}'s transaction,
	 * left open: the connection is bound to the thread without a Spring transaction (as
	 * {@code SUPPORTS} binds one), so the store claims by lease in it, and what it writes
	 * stays uncommitted until the test ends that transaction.
	 */
	private <T> T inHeldTransaction(Connection holder, Function<JdbcIdempotencyStore, T> steps) {
		return inHeldTransaction(holder, TABLE, this.clock, steps);
	}

	/**
	 * {@link #inHeldTransaction(Connection, Function)} on {@code table}, for other tests.
	 */
	static <T> T inHeldTransaction(Connection holder, String table, Clock clock,
			Function<JdbcIdempotencyStore, T> steps) {
		SingleConnectionDataSource dataSource = new SingleConnectionDataSource(holder, true);
		TransactionSynchronizationManager.bindResource(dataSource, new ConnectionHolder(holder));
		try {
			return steps.apply(new JdbcIdempotencyStore(dataSource, table, Duration.ofSeconds(5), clock));
		}
		finally {
			TransactionSynchronizationManager.unbindResource(dataSource);
		}
	}

	private void awaitLockWait() {
		JdbcClient jdbc = JdbcClient.create(this.dataSource);
		await().atMost(Duration.ofSeconds(20)).until(() -> lockWaits(jdbc) >= 1);
	}

	private ClaimRequest request(RecordId id, String owner, Duration lease) {
		return new ClaimRequest(id, owner, null, lease, Duration.ofDays(1));
	}

	private RecordId id(String key) {
		return new RecordId(this.prefix, key);
	}

}
