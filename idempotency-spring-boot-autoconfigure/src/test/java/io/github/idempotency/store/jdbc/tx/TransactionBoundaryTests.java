package io.github.idempotency.store.jdbc.tx;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.IdempotencyTemplate;
import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.IdempotentRequest;
import io.github.idempotency.IdempotentResultNotStoredException;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.transaction.support.TransactionCallback;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The record's fate follows the method's writes, through the annotation, for every
 * propagation, with and without an outer transaction of the same or another resource:
 * if the method's transaction commits, its record commits with it (COMPLETED, or FAILED
 * when the method threw and the rollback rules still committed); if it rolls back, nothing
 * of the claim remains, but a permanent failure, stored after the rollback; a commit that
 * fails is such a rollback, whatever the method returned or threw. Each database
 * is a small subclass naming its data source. The application fails open when the store
 * cannot be reached, which must never let a call the store refuses run unprotected.
 */
@org.springframework.boot.test.context.SpringBootTest(classes = TransactionBoundaryApplication.class,
		properties = "idempotency.store-unavailable=fail-open")
abstract class TransactionBoundaryTests {

	@Autowired
	Payments payments;

	@Autowired
	IdempotencyStore store;

	@Autowired
	FailingCommits transactionManager;

	@Autowired
	DataSource dataSource;

	@Autowired
	IdempotencyTemplate template;

	private final String prefix = UUID.randomUUID().toString();

	@Test
	void requiresNewCommitsItsRecordWithItsWritesWhenTheOuterTransactionRollsBack() {
		AtomicReference<String> first = new AtomicReference<>();
		inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, (status) -> {
			first.set(this.payments.requiresNew(key("1")));
			return rollback(status);
		});
		assertThat(this.payments.effects(key("1"))).isOne();
		assertThat(record("requires-new", "1").status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(this.payments.requiresNew(key("1"))).isEqualTo(first.get());
		assertThat(this.payments.effects(key("1"))).isOne();
	}

	@Test
	void aProtectedTransactionalMethodIsClaimedInItsOwnTransaction() {
		inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, (status) -> {
			this.payments.requiresNewProtected(key("1"));
			return rollback(status);
		});
		assertThat(this.payments.effects(key("1"))).isOne();
		assertThat(record("protected", "1").status()).isEqualTo(RecordStatus.COMPLETED);
		this.payments.requiresNewProtected(key("1"));
		assertThat(this.payments.effects(key("1"))).isOne();
	}

	@Test
	void anotherResourcesTransactionAroundTheCallDoesNotSplitTheClaimFromTheWrites() {
		TransactionTemplate other = new TransactionTemplate(new DataSourceTransactionManager(otherResource()));
		// a result that cannot be stored: its failure is recorded with the writes, in their transaction
		Object result = other.execute((status) -> this.payments.unwritable(key("1")));
		assertThat(result).isNotNull();
		assertThat(this.payments.effects(key("1"))).isOne();
		assertThat(record("unwritable", "1").status()).isEqualTo(RecordStatus.FAILED);
		assertThat(record("unwritable", "1").errorType())
			.isEqualTo(IdempotentResultNotStoredException.class.getName());
		assertThatExceptionOfType(IdempotentFailureReplayedException.class)
			.isThrownBy(() -> other.execute((status) -> this.payments.unwritable(key("1"))));
		assertThat(this.payments.effects(key("1"))).isOne();
		String first = other.execute((status) -> this.payments.required(key("2")));
		assertThat(this.payments.required(key("2"))).isEqualTo(first);
		assertThat(this.payments.effects(key("2"))).isOne();
	}

	@Test
	void aRequiredMethodJoiningAnOuterTransactionThatRollsBackLeavesNothing() {
		inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, (status) -> {
			this.payments.required(key("1"));
			return rollback(status);
		});
		assertThat(this.payments.effects(key("1"))).isZero();
		assertThat(find("required", "1")).isEmpty();
		this.payments.required(key("1"));
		assertThat(this.payments.effects(key("1"))).isOne();
	}

	@Test
	void inATransactionThatCommitsTheItemsOfABatchAfterOneThatFailedAreLeftForTheNextDelivery() {
		List<IdempotentRequest> batch = List.of(IdempotentRequest.of("batch", key("a")),
				IdempotentRequest.of("batch", key("b")), IdempotentRequest.of("batch", key("c")));
		AtomicInteger runs = new AtomicInteger();
		inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, (status) -> {
			// the caller handles the failure and commits what ran
			assertThatIllegalStateException().isThrownBy(() -> this.template.executeAll(batch, String.class, (request) -> {
				runs.incrementAndGet();
				if (request.key().equals(key("b"))) {
					throw new IllegalStateException("broker hiccup");
				}
				return "ran " + request.key();
			}));
			return null;
		});
		assertThat(record("batch", "a").status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(find("batch", "c")).isEmpty();
		List<String> again = this.template.executeAll(batch, String.class, (request) -> {
			runs.incrementAndGet();
			return "ran " + request.key();
		});
		assertThat(again.get(2)).isEqualTo("ran " + key("c"));
		assertThat(record("batch", "c").status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(runs).hasValue(3);
	}

	@Test
	void inATransactionThatCommitsABatchRejectedAsInProgressLeavesWhatItClaimedForTheNextDelivery() {
		ClaimResult elsewhere = this.store.claim(new ClaimRequest(new RecordId("batch", key("busy")), "elsewhere",
				null, Duration.ofMinutes(1), Duration.ofDays(1)));
		assertThat(elsewhere.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		List<IdempotentRequest> batch = List.of(IdempotentRequest.of("batch", key("a")),
				IdempotentRequest.of("batch", key("busy")));
		inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, (status) -> {
			assertThatExceptionOfType(IdempotencyInProgressException.class)
				.isThrownBy(() -> this.template.executeAll(batch, String.class, (request) -> "ran"));
			return null;
		});
		assertThat(find("batch", "a")).isEmpty();
		assertThat(this.template.executeAll(List.of(batch.get(0)), String.class, (request) -> "ran"))
			.containsExactly("ran");
		assertThat(record("batch", "a").status()).isEqualTo(RecordStatus.COMPLETED);
	}

	@Test
	void theSameKeyTwiceInOneTransactionRunsOnce() {
		List<String> results = inTransaction(TransactionDefinition.PROPAGATION_REQUIRED,
				(status) -> List.of(this.payments.required(key("1")), this.payments.required(key("1"))));
		assertThat(results.get(1)).isEqualTo(results.get(0));
		assertThat(this.payments.effects(key("1"))).isOne();
	}

	@Test
	void aPermanentFailureThatRollsTheTransactionBackIsStoredAfterTheRollbackAndReplayed() {
		assertThatExceptionOfType(Payments.CardDeclinedException.class)
			.isThrownBy(() -> this.payments.declines(key("1")));
		assertThat(this.payments.effects(key("1"))).isZero();
		IdempotencyRecord record = record("declines", "1");
		assertThat(record.status()).isEqualTo(RecordStatus.FAILED);
		assertThat(record.errorType()).isEqualTo(Payments.CardDeclinedException.class.getName());
		assertThatExceptionOfType(IdempotentFailureReplayedException.class)
			.isThrownBy(() -> this.payments.declines(key("1")))
			.withMessageContaining("declined: 51");
		assertThat(this.payments.effects(key("1"))).isZero();
	}

	@Test
	void aCheckedExceptionTheRollbackRulesCommitIsRecordedWithTheWrites() {
		assertThatExceptionOfType(Payments.PaymentPendingException.class)
			.isThrownBy(() -> this.payments.pending(key("1")));
		assertThat(this.payments.effects(key("1"))).isOne();
		assertThat(record("pending", "1").status()).isEqualTo(RecordStatus.FAILED);
		assertThatExceptionOfType(IdempotentFailureReplayedException.class)
			.isThrownBy(() -> this.payments.pending(key("1")));
		assertThat(this.payments.effects(key("1"))).isOne();
	}

	@Test
	void aNoRollbackForExceptionIsRecordedWithTheWrites() {
		assertThatExceptionOfType(IllegalStateException.class)
			.isThrownBy(() -> this.payments.noRollbackFor(key("1")));
		assertThat(this.payments.effects(key("1"))).isOne();
		assertThat(record("no-rollback-for", "1").status()).isEqualTo(RecordStatus.FAILED);
		assertThatExceptionOfType(IdempotentFailureReplayedException.class)
			.isThrownBy(() -> this.payments.noRollbackFor(key("1")));
		assertThat(this.payments.effects(key("1"))).isOne();
	}

	/**
	 * How a run ends in a commit of its own transaction: a result, a failure the rollback
	 * rules commit, or an element of a batch in the caller's transaction; each delivers the
	 * key once, and throws what its caller sees thrown.
	 */
	enum CommittedRun {

		REQUIRED("required", RecordStatus.COMPLETED, (test, key) -> test.payments.required(key)),

		REQUIRES_NEW("requires-new", RecordStatus.COMPLETED, (test, key) -> test.payments.requiresNew(key)),

		CHECKED_FAILURE_COMMITTED("pending", RecordStatus.FAILED, (test, key) -> test.payments.pending(key)),

		NO_ROLLBACK_FOR("no-rollback-for", RecordStatus.FAILED, (test, key) -> test.payments.noRollbackFor(key)),

		BATCH_ELEMENT("batch", RecordStatus.COMPLETED, TransactionBoundaryTests::deliverAsBatchElement);

		private final String workflow;

		private final RecordStatus stored;

		private final Delivery delivery;

		CommittedRun(String workflow, RecordStatus stored, Delivery delivery) {
			this.workflow = workflow;
			this.stored = stored;
			this.delivery = delivery;
		}

		void deliver(TransactionBoundaryTests test, String key) throws Exception {
			this.delivery.deliver(test, key);
		}

		@FunctionalInterface
		interface Delivery {

			void deliver(TransactionBoundaryTests test, String key) throws Exception;

		}

	}

	@ParameterizedTest
	@EnumSource(CommittedRun.class)
	void aRunWhoseCommitFailsLeavesNothingAndTheRedeliveryRunsItOnce(CommittedRun run) {
		this.transactionManager.failNextCommit();
		assertThatExceptionOfType(TransactionSystemException.class).isThrownBy(() -> run.deliver(this, key("1")))
			.withMessageContaining("made to fail by the test");
		assertThat(this.payments.effects(key("1"))).isZero();
		assertThat(find(run.workflow, "1")).isEmpty();
		deliverIgnoringItsFailure(run);
		assertThat(this.payments.effects(key("1"))).isOne();
		assertThat(record(run.workflow, "1").status()).isEqualTo(run.stored);
		deliverIgnoringItsFailure(run);
		assertThat(this.payments.effects(key("1"))).isOne();
	}

	/** The key as the second element of a batch, in a transaction of the caller's. */
	private void deliverAsBatchElement(String key) {
		JdbcClient jdbc = JdbcClient.create(this.dataSource);
		List<IdempotentRequest> batch = List.of(IdempotentRequest.of("batch", key + "-neighbour"),
				IdempotentRequest.of("batch", key));
		inTransaction(TransactionDefinition.PROPAGATION_REQUIRED,
				(status) -> this.template.executeAll(batch, String.class, (request) -> {
					jdbc.sql("INSERT INTO tx_boundary_effect (effect_key) VALUES (:key)")
						.param("key", request.key())
						.update();
					return request.key() + ":" + UUID.randomUUID();
				}));
	}

	private void deliverIgnoringItsFailure(CommittedRun run) {
		try {
			run.deliver(this, key("1"));
		}
		catch (Exception ex) {
			assertThat(ex).isNotInstanceOf(TransactionSystemException.class);
		}
	}

	@Test
	void aSupportsMethodOnABoundConnectionWithoutATransactionIsHeldByItsLease() {
		AtomicReference<Optional<IdempotencyRecord>> whileRunning = new AtomicReference<>();
		inTransaction(TransactionDefinition.PROPAGATION_SUPPORTS, (status) -> {
			// binds a connection to the thread, in auto-commit: no actual transaction
			JdbcClient.create(this.dataSource).sql("SELECT 1").query(Integer.class).single();
			this.payments.supports(key("1"), () -> whileRunning.set(fromAnotherThread("supports", "1")));
			return null;
		});
		assertThat(whileRunning.get()).hasValueSatisfying(
				(record) -> assertThat(record.status()).isEqualTo(RecordStatus.IN_PROGRESS));
		assertThat(record("supports", "1").status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(this.payments.effects(key("1"))).isOne();
	}

	@Test
	void aNotSupportedMethodInsideATransactionThatRollsBackKeepsItsAutoCommittedWritesAndRecord() {
		AtomicReference<Optional<IdempotencyRecord>> whileRunning = new AtomicReference<>();
		inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, (status) -> {
			this.payments.notSupported(key("1"), () -> whileRunning.set(fromAnotherThread("not-supported", "1")));
			return rollback(status);
		});
		assertThat(whileRunning.get()).hasValueSatisfying(
				(record) -> assertThat(record.status()).isEqualTo(RecordStatus.IN_PROGRESS));
		assertThat(this.payments.effects(key("1"))).isOne();
		assertThat(record("not-supported", "1").status()).isEqualTo(RecordStatus.COMPLETED);
	}

	@Test
	void aMethodWithoutATransactionOfItsOwnInsideAnotherResourcesTransactionIsHeldByItsLease() {
		AtomicReference<Optional<IdempotencyRecord>> whileRunning = new AtomicReference<>();
		AtomicReference<Optional<IdempotencyRecord>> beforeCommit = new AtomicReference<>();
		new TransactionTemplate(new DataSourceTransactionManager(otherResource())).executeWithoutResult((status) -> {
			// binds a connection of the store's data source, in auto-commit, to the other transaction
			JdbcClient.create(this.dataSource).sql("SELECT 1").query(Integer.class).single();
			this.payments.plain(key("1"), () -> whileRunning.set(fromAnotherThread("plain", "1")));
			beforeCommit.set(fromAnotherThread("plain", "1"));
		});
		assertThat(whileRunning.get()).hasValueSatisfying(
				(record) -> assertThat(record.status()).isEqualTo(RecordStatus.IN_PROGRESS));
		// the claim is not part of the transaction around the call: it is settled once that commits
		assertThat(beforeCommit.get()).hasValueSatisfying(
				(record) -> assertThat(record.status()).isEqualTo(RecordStatus.IN_PROGRESS));
		assertThat(record("plain", "1").status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(this.payments.effects(key("1"))).isOne();
		// and given back once it rolls back: the engine cannot tell writes that escaped it
		new TransactionTemplate(new DataSourceTransactionManager(otherResource())).executeWithoutResult((status) -> {
			this.payments.plain(key("2"), () -> {
			});
			status.setRollbackOnly();
		});
		assertThat(find("plain", "2")).isEmpty();
	}

	@Test
	void aReadOnlyTransactionRefusesTheClaimAndTheMethodDoesNotRunEvenWhenFailingOpen() {
		assertThatIllegalStateException().isThrownBy(() -> this.payments.readOnly(key("1")))
			.withMessageContaining("read-only transaction");
		assertThat(this.payments.reads(key("1"))).isZero();
		assertThat(find("read-only", "1")).isEmpty();
		// joined from outside: the same
		assertThatIllegalStateException()
			.isThrownBy(() -> inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, true,
					(status) -> this.payments.required(key("2"))))
			.withMessageContaining("read-only transaction");
		assertThat(this.payments.effects(key("2"))).isZero();
		assertThat(find("required", "2")).isEmpty();
		// a batch too
		assertThatIllegalStateException()
			.isThrownBy(() -> inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, true,
					(status) -> this.template.executeAll(List.of(IdempotentRequest.of("read-only-batch", key("3")),
							IdempotentRequest.of("read-only-batch", key("4"))), String.class, (request) -> "ran")))
			.withMessageContaining("read-only transaction");
		assertThat(find("read-only-batch", "3")).isEmpty();
		assertThat(find("read-only-batch", "4")).isEmpty();
	}

	@Test
	void insideAReadOnlyTransactionANestedMethodIsRefusedAndARequiresNewMethodClaimsInItsOwn() {
		// a savepoint stays in the read-only transaction
		assertThatIllegalStateException()
			.isThrownBy(() -> inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, true,
					(status) -> this.payments.nested(key("1"), false)))
			.withMessageContaining("read-only transaction");
		assertThat(this.payments.effects(key("1"))).isZero();
		assertThat(find("nested", "1")).isEmpty();
		// a new transaction is not read-only: it writes, and its record commits with the writes
		String first = inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, true,
				(status) -> this.payments.requiresNew(key("2")));
		assertThat(this.payments.requiresNew(key("2"))).isEqualTo(first);
		assertThat(this.payments.effects(key("2"))).isOne();
		assertThat(record("requires-new", "2").status()).isEqualTo(RecordStatus.COMPLETED);
	}

	@Test
	void aReadOnlyMethodWithoutAnActualTransactionIsHeldByItsLease() {
		String first = this.payments.readOnlySupports(key("1"));
		assertThat(this.payments.readOnlySupports(key("1"))).isEqualTo(first);
		assertThat(this.payments.reads(key("1"))).isOne();
		assertThat(record("read-only-supports", "1").status()).isEqualTo(RecordStatus.COMPLETED);
	}

	@Test
	void aMandatoryMethodFollowsItsCallersTransactionAndWithoutOneStoresNothing() {
		assertThatExceptionOfType(IllegalTransactionStateException.class)
			.isThrownBy(() -> this.payments.mandatory(key("1")));
		assertThat(find("mandatory", "1")).isEmpty();
		inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, (status) -> {
			this.payments.mandatory(key("1"));
			return rollback(status);
		});
		assertThat(find("mandatory", "1")).isEmpty();
		assertThat(this.payments.effects(key("1"))).isZero();
		inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, (status) -> this.payments.mandatory(key("1")));
		assertThat(record("mandatory", "1").status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(this.payments.effects(key("1"))).isOne();
	}

	@Test
	void aNestedMethodWhoseOuterTransactionRollsBackLeavesNothing() {
		inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, (status) -> {
			this.payments.nested(key("1"), false);
			return rollback(status);
		});
		assertThat(find("nested", "1")).isEmpty();
		assertThat(this.payments.effects(key("1"))).isZero();
		this.payments.nested(key("1"), false);
		assertThat(this.payments.effects(key("1"))).isOne();
	}

	@Test
	void aNestedMethodThatFailsIsRolledBackToItsSavepointAndRunsAgainOnRedelivery() {
		inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, (status) -> {
			assertThatExceptionOfType(IllegalStateException.class)
				.isThrownBy(() -> this.payments.nested(key("1"), true));
			return null;
		});
		assertThat(find("nested", "1")).isEmpty();
		assertThat(this.payments.effects(key("1"))).isZero();
		this.payments.nested(key("1"), false);
		assertThat(this.payments.effects(key("1"))).isOne();
	}

	@Test
	void aNestedPermanentFailureIsStoredWhenTheOuterTransactionCommits() {
		inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, (status) -> {
			assertThatExceptionOfType(Payments.CardDeclinedException.class)
				.isThrownBy(() -> this.payments.nestedDeclines(key("1")));
			return null;
		});
		assertThat(this.payments.effects(key("1"))).isZero();
		assertThat(record("nested-declines", "1").status()).isEqualTo(RecordStatus.FAILED);
	}

	@Test
	void racingCopiesOfARequiresNewMethodInOuterTransactionsThatOftenRollBackRunEachKeyOnce() throws Exception {
		List<String> deliveries = new ArrayList<>();
		for (int key = 0; key < 100; key++) {
			for (int copy = 0; copy < 3; copy++) {
				deliveries.add(key("race-" + key));
			}
		}
		Collections.shuffle(deliveries);
		Map<String, Set<String>> results = new ConcurrentHashMap<>();
		AtomicInteger calls = new AtomicInteger();
		ExecutorService executor = Executors.newFixedThreadPool(8);
		try {
			List<Future<?>> futures = new ArrayList<>();
			for (String key : deliveries) {
				futures.add(executor.submit(() -> inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, (status) -> {
					String result = this.payments.requiresNew(key);
					results.computeIfAbsent(key, (k) -> ConcurrentHashMap.newKeySet()).add(result);
					return (calls.incrementAndGet() % 2 == 0) ? rollback(status) : null;
				})));
			}
			for (Future<?> future : futures) {
				future.get(120, TimeUnit.SECONDS);
			}
		}
		finally {
			executor.shutdownNow();
		}
		assertThat(results).hasSize(100);
		assertThat(results.values()).allSatisfy((distinct) -> assertThat(distinct).hasSize(1));
		assertThat(this.payments.effectsLike(this.prefix + "-race-")).isEqualTo(100);
	}

	private <T> T inTransaction(int propagation, TransactionCallback<T> body) {
		return inTransaction(propagation, false, body);
	}

	private <T> T inTransaction(int propagation, boolean readOnly, TransactionCallback<T> body) {
		TransactionTemplate template = new TransactionTemplate(this.transactionManager);
		template.setPropagationBehavior(propagation);
		template.setReadOnly(readOnly);
		return template.execute(body);
	}

	private static <T> @Nullable T rollback(TransactionStatus status) {
		status.setRollbackOnly();
		return null;
	}

	Optional<IdempotencyRecord> fromAnotherThread(String workflow, String suffix) {
		ExecutorService other = Executors.newSingleThreadExecutor();
		try {
			return other.submit(() -> find(workflow, suffix)).get(30, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
		finally {
			other.shutdownNow();
		}
	}

	String key(String suffix) {
		return this.prefix + "-" + suffix;
	}

	private Optional<IdempotencyRecord> find(String workflow, String suffix) {
		return this.store.find(new RecordId(workflow, key(suffix)));
	}

	IdempotencyRecord record(String workflow, String suffix) {
		return find(workflow, suffix).orElseThrow(() -> new AssertionError("no record of " + key(suffix)));
	}

	static DataSource otherResource() {
		return new DriverManagerDataSource("jdbc:h2:mem:other-resource;DB_CLOSE_DELAY=-1");
	}

}
