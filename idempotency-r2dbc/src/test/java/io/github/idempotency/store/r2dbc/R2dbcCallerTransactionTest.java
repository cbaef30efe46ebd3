package io.github.idempotency.store.r2dbc;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import io.r2dbc.spi.ConnectionFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.ReactiveClaimHandle;
import io.github.idempotency.store.ReactiveClaimResult;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.reactive.TransactionSynchronization;
import org.springframework.transaction.reactive.TransactionSynchronizationManager;
import org.springframework.transaction.reactive.TransactionalOperator;
import org.springframework.transaction.support.DefaultTransactionDefinition;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The r2dbc store inside the caller's reactive transaction ({@code TransactionalOperator}
 * on an {@code R2dbcTransactionManager}), on PostgreSQL and on MariaDB: the record commits
 * or rolls back with the caller's own writes, under each propagation as the jdbc store's.
 */
class R2dbcCallerTransactionTest {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration RETENTION = Duration.ofHours(1);

	private final String workflow = "tx-" + UUID.randomUUID();

	private R2dbcIdempotencyStore store;

	private DatabaseClient client;

	private R2dbcTransactionManager transactionManager;

	private void on(String database) {
		ConnectionFactory connectionFactory = database.equals("postgresql") ? R2dbcTestDatabases.postgres()
				: R2dbcTestDatabases.mariaDb();
		this.store = new R2dbcIdempotencyStore(connectionFactory, "idempotency_record", Duration.ofSeconds(5),
				Clock.systemUTC());
		this.client = DatabaseClient.create(connectionFactory);
		this.client.sql("CREATE TABLE IF NOT EXISTS r2dbc_caller_orders (order_key VARCHAR(200) PRIMARY KEY)")
			.then()
			.block();
		this.transactionManager = new R2dbcTransactionManager(connectionFactory);
	}

	private TransactionalOperator transaction(int propagation) {
		return TransactionalOperator.create(this.transactionManager, new DefaultTransactionDefinition(propagation));
	}

	private TransactionalOperator transaction() {
		return transaction(TransactionDefinition.PROPAGATION_REQUIRED);
	}

	private ClaimRequest request(String key) {
		return new ClaimRequest(new RecordId(this.workflow, key), "owner-" + UUID.randomUUID(), "fp", LEASE, RETENTION);
	}

	/** The caller's run: claims, writes its own row and completes, all in the transaction it is subscribed in. */
	private Mono<ReactiveClaimResult> run(String key) {
		return this.store.claim(request(key)).flatMap((claim) -> {
			if (claim.handle() == null) {
				return Mono.just(claim);
			}
			ReactiveClaimHandle handle = claim.acquiredHandle();
			return order(key).then(handle.complete("{\"order\":\"" + key + "\"}")).thenReturn(claim);
		});
	}

	private Mono<Long> order(String key) {
		return this.client.sql("INSERT INTO r2dbc_caller_orders (order_key) VALUES (:key)")
			.bind("key", this.workflow + "/" + key)
			.fetch()
			.rowsUpdated();
	}

	private boolean orderExists(String key) {
		return Boolean.TRUE.equals(this.client.sql("SELECT COUNT(*) AS n FROM r2dbc_caller_orders WHERE order_key = :key")
			.bind("key", this.workflow + "/" + key)
			.map((row) -> R2dbcRows.number(row, "n") == 1)
			.one()
			.block());
	}

	private long orders() {
		Long count = this.client.sql("SELECT COUNT(*) AS n FROM r2dbc_caller_orders WHERE order_key LIKE :prefix")
			.bind("prefix", this.workflow + "/%")
			.map((row) -> R2dbcRows.number(row, "n"))
			.one()
			.block();
		return (count != null) ? count : 0;
	}

	private IdempotencyRecord record(String key) {
		return this.store.find(new RecordId(this.workflow, key)).block();
	}

	@ParameterizedTest
	@ValueSource(strings = { "postgresql", "mariadb" })
	void aClaimInTheCallersTransactionCommitsWithItsWrites(String database) {
		on(database);
		StepVerifier.create(transaction().transactional(run("a")))
			.assertNext((claim) -> assertThat(claim.acquiredHandle().joinsTransaction()).isTrue())
			.verifyComplete();
		assertThat(record("a").status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(record("a").response()).isEqualTo("{\"order\":\"a\"}");
		assertThat(orderExists("a")).isTrue();
	}

	@ParameterizedTest
	@ValueSource(strings = { "postgresql", "mariadb" })
	void aClaimInTheCallersTransactionRollsBackWithItsWritesAndTheKeyIsFreeAgain(String database) {
		on(database);
		StepVerifier.create(transaction().transactional(run("b").then(Mono.error(new IllegalStateException("declined")))))
			.verifyErrorMessage("declined");
		assertThat(record("b")).isNull();
		assertThat(orderExists("b")).isFalse();
		StepVerifier.create(this.store.claim(request("b")))
			.assertNext((claim) -> assertThat(claim.outcome()).isEqualTo(ClaimOutcome.ACQUIRED))
			.verifyComplete();
	}

	/**
	 * A commit that fails: on PostgreSQL by the database itself, a deferred unique
	 * constraint broken by the caller's writes and checked only at the commit; on MariaDB,
	 * which defers no constraint, by a synchronization whose {@code beforeCommit} fails, so
	 * that the transaction manager rolls back instead of committing.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "postgresql", "mariadb" })
	void aClaimWhoseTransactionFailsToCommitLeavesNothing(String database) {
		on(database);
		Mono<Void> failingCommit;
		if (database.equals("postgresql")) {
			this.client.sql("CREATE TABLE IF NOT EXISTS r2dbc_caller_deferred (id VARCHAR(200), CONSTRAINT "
					+ "r2dbc_caller_deferred_unique UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)").then().block();
			String id = this.workflow;
			failingCommit = this.client.sql("INSERT INTO r2dbc_caller_deferred (id) VALUES (:id), (:id)")
				.bind("id", id)
				.then();
		}
		else {
			failingCommit = TransactionSynchronizationManager.forCurrentTransaction()
				.doOnNext((manager) -> manager.registerSynchronization(new TransactionSynchronization() {
					@Override
					public Mono<Void> beforeCommit(boolean readOnly) {
						return Mono.error(new IllegalStateException("the commit fails"));
					}
				}))
				.then();
		}
		StepVerifier.create(transaction().transactional(run("c").then(failingCommit))).verifyError();
		assertThat(record("c")).isNull();
		assertThat(orderExists("c")).isFalse();
	}

	@ParameterizedTest
	@ValueSource(strings = { "postgresql", "mariadb" })
	void racingDuplicatesInTheirOwnTransactionsRunEachKeyOnce(String database) {
		on(database);
		int keys = 50;
		int callers = 16;
		ConcurrentMap<String, AtomicInteger> answers = new ConcurrentHashMap<>();
		Flux.range(0, keys * callers)
			.flatMap((i) -> transaction().transactional(run("k" + (i / callers)))
				.map((claim) -> claim.outcome().name())
				// waited past the lock timeout inside its transaction: refused, retryable
				.onErrorResume(IdempotencyInProgressException.class, (ex) -> Mono.just("REFUSED")), callers)
			.doOnNext((answer) -> answers.computeIfAbsent(answer, (name) -> new AtomicInteger()).incrementAndGet())
			.then()
			.block(Duration.ofMinutes(2));
		assertThat(answers.keySet()).isSubsetOf("ACQUIRED", "DUPLICATE", "IN_PROGRESS", "REFUSED");
		assertThat(answers.get("ACQUIRED")).hasValue(keys);
		assertThat(orders()).isEqualTo(keys);
		for (int k = 0; k < keys; k++) {
			assertThat(record("k" + k).status()).isEqualTo(RecordStatus.COMPLETED);
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "postgresql", "mariadb" })
	void aClaimInARequiresNewTransactionCommitsWithItWhateverTheOuterTransactionDoes(String database) {
		on(database);
		Mono<ReactiveClaimResult> inner = transaction(TransactionDefinition.PROPAGATION_REQUIRES_NEW)
			.transactional(run("d"));
		StepVerifier.create(transaction().transactional(order("outer").then(inner).flatMap((claim) -> {
			assertThat(claim.acquiredHandle().joinsTransaction()).isTrue();
			return Mono.<ReactiveClaimResult>error(new IllegalStateException("the outer transaction fails"));
		}))).verifyError(IllegalStateException.class);
		assertThat(record("d").status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(orderExists("d")).isTrue();
		assertThat(orderExists("outer")).isFalse();
	}

	@ParameterizedTest
	@ValueSource(strings = { "postgresql", "mariadb" })
	void aClaimInANestedTransactionRolledBackToItsSavepointLeavesTheKeyFreeWhileTheOuterCommits(String database) {
		on(database);
		Mono<Object> nested = transaction(TransactionDefinition.PROPAGATION_NESTED)
			.transactional(run("e").then(Mono.error(new IllegalStateException("declined"))))
			.onErrorResume(IllegalStateException.class, (ex) -> Mono.empty());
		StepVerifier.create(transaction().transactional(order("outer").then(nested))).verifyComplete();
		assertThat(record("e")).isNull();
		assertThat(orderExists("e")).isFalse();
		assertThat(orderExists("outer")).isTrue();
	}

	@ParameterizedTest
	@ValueSource(strings = { "postgresql", "mariadb" })
	void aClaimWithoutTheTransactionIsLeasedAndCommitsAtOnce(String database) {
		on(database);
		Function<ReactiveClaimResult, Mono<ReactiveClaimResult>> failOuter = (claim) -> Mono
			.error(new IllegalStateException("the outer transaction fails"));
		Mono<ReactiveClaimResult> notSupported = transaction(TransactionDefinition.PROPAGATION_NOT_SUPPORTED)
			.transactional(this.store.claim(request("f")));
		List<ReactiveClaimResult> claims = new java.util.ArrayList<>();
		StepVerifier.create(transaction().transactional(order("outer").then(notSupported)
			.doOnNext(claims::add)
			.flatMap(failOuter))).verifyError(IllegalStateException.class);
		assertThat(claims).singleElement()
			.satisfies((claim) -> assertThat(claim.acquiredHandle().joinsTransaction()).isFalse());
		assertThat(record("f").status()).isEqualTo(RecordStatus.IN_PROGRESS);
		assertThat(orderExists("outer")).isFalse();
	}

	@ParameterizedTest
	@ValueSource(strings = { "postgresql", "mariadb" })
	void aFailureReleasedInsideATransactionThatCommitsIsRecorded(String database) {
		on(database);
		StepVerifier.create(transaction().transactional(this.store.claim(request("g"))
			.flatMap((claim) -> order("g").then(claim.acquiredHandle().release(new IllegalStateException("caught"))))))
			.expectNext(true)
			.verifyComplete();
		assertThat(record("g").status()).isEqualTo(RecordStatus.FAILED);
		assertThat(orderExists("g")).isTrue();
	}

	@ParameterizedTest
	@ValueSource(strings = { "postgresql", "mariadb" })
	void aClaimOutsideAnyTransactionIsLeased(String database) {
		on(database);
		StepVerifier.create(this.store.claim(request("h")))
			.assertNext((claim) -> assertThat(claim.acquiredHandle().joinsTransaction()).isFalse())
			.verifyComplete();
		assertThat(record("h").status()).isEqualTo(RecordStatus.IN_PROGRESS);
	}

}
