package io.github.idempotency.autoconfigure.web;

import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import javax.sql.DataSource;

import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.scheduler.Schedulers;

import io.github.idempotency.Idempotent;
import io.github.idempotency.testservers.TestServers;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.r2dbc.connection.ConnectionHolder;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.reactive.GenericReactiveTransaction;
import org.springframework.transaction.reactive.TransactionSynchronizationManager;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A WebFlux + R2DBC application whose {@code @Transactional @Idempotent} handler method
 * writes a transfer: on the r2dbc store the record is written in the handler's
 * transaction, so that the transfer and the record commit or roll back together — a
 * method that fails, a commit the database refuses, a client that goes away while the
 * transaction is open — and racing duplicates meet on the record's row. The answer is sent
 * once the transaction committed. Every case runs on PostgreSQL and on MariaDB (the
 * subclasses), under BlockHound.
 */
@SpringBootTest(classes = TransactionalReactiveHandlerTest.TransfersApplication.class,
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { ReactiveWebTestApplication.REACTIVE, "idempotency.backend=r2dbc",
				"idempotency.r2dbc.initialize-schema=always", PrincipalScopeTest.EXCLUDE })
@ExtendWith(BlockHoundCheck.class)
abstract class TransactionalReactiveHandlerTest {

	private static final int KEYS = 50;

	private static final int RACERS = 16;

	@LocalServerPort
	int port;

	@Autowired
	Ledger ledger;

	@Autowired
	Gate gate;

	/** The database, reached by JDBC for the test's own reads. */
	protected abstract DataSource database();

	/** Before the application starts: the transfers table, empty, and a record table of the class's own. */
	static void tables(DynamicPropertyRegistry registry, DataSource database, String jdbcUrl, String table) {
		JdbcTemplate jdbc = new JdbcTemplate(database);
		jdbc.execute("DROP TABLE IF EXISTS " + table);
		jdbc.execute("DROP TABLE IF EXISTS " + table + "_transfer");
		jdbc.execute("CREATE TABLE " + table + "_transfer (run_id VARCHAR(64) PRIMARY KEY, "
				+ "transfer_id VARCHAR(64) NOT NULL)");
		registry.add("idempotency.r2dbc.table-name", () -> table);
		registry.add("test.transfers", () -> table + "_transfer");
		registry.add("test.r2dbc-url", () -> TestServers.r2dbcUrl(jdbcUrl, 24));
	}

	@Test
	void aTransferAndItsRecordCommitTogetherAndTheAnswerIsReplayed() throws Exception {
		HttpClients http = new HttpClients(this.port);
		// seen from another connection the moment the commit returned, before anything else
		// ran: a process that died there would leave both or neither
		CompletableFuture<String> committed = this.ledger
			.afterNextCommit(() -> record("k-commit") + " " + runs("t-commit").size());
		HttpResponse<byte[]> first = http.post("/transfers/t-commit", "{}", "Idempotency-Key", "k-commit");
		assertThat(first.statusCode()).as(new String(first.body(), StandardCharsets.UTF_8)).isEqualTo(201);
		assertThat(committed.get(60, TimeUnit.SECONDS)).isEqualTo("COMPLETED 1");
		assertThat(first.headers().firstValue("Location")).hasValue("/transfers/t-commit");
		assertThat(runs("t-commit")).containsExactly(run(first));
		assertThat(record("k-commit")).isEqualTo("COMPLETED");
		HttpResponse<byte[]> replay = http.post("/transfers/t-commit", "{}", "Idempotency-Key", "k-commit");
		assertThat(replay.statusCode()).isEqualTo(201);
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(runs("t-commit")).hasSize(1);
	}

	@Test
	void aMethodThatFailsRollsBothBackAndTheRetryRunsOnce() {
		HttpClients http = new HttpClients(this.port);
		this.gate.failNext();
		HttpResponse<byte[]> failed = http.post("/transfers/t-fail", "{}", "Idempotency-Key", "k-fail");
		assertThat(failed.statusCode()).isEqualTo(500);
		assertThat(runs("t-fail")).isEmpty();
		assertThat(record("k-fail")).isNull();
		retriedOnce(http, "t-fail", "k-fail");
	}

	@Test
	void aCommitTheDatabaseRefusesRollsBothBackAndNothingOfTheAnswerIsSent() {
		HttpClients http = new HttpClients(this.port);
		this.ledger.refuseNextCommit();
		HttpResponse<byte[]> refused = http.post("/transfers/t-refused", "{}", "Idempotency-Key", "k-refused");
		assertThat(refused.statusCode()).isEqualTo(500);
		// the answer written in the transaction, its headers included, went nowhere
		assertThat(refused.headers().firstValue("Location")).isEmpty();
		assertThat(new String(refused.body(), StandardCharsets.UTF_8)).doesNotContain("run");
		assertThat(runs("t-refused")).isEmpty();
		assertThat(record("k-refused")).isNull();
		retriedOnce(http, "t-refused", "k-refused");
	}

	@Test
	void aClientThatGoesAwayRollsBothBackAndNothingOfTheRunOutlivesTheTransaction() throws Exception {
		HttpClients http = new HttpClients(this.port);
		CompletableFuture<SignalType> ended = this.gate.holdNext();
		int rollbacks = this.ledger.rollbacks();
		try (java.net.Socket client = http.open("/transfers/t-gone", "{}", "Idempotency-Key", "k-gone")) {
			this.gate.awaitEntered();
			client.close();
			// the transaction rolls back when the client's subscription is cancelled
			await().atMost(Duration.ofSeconds(30)).until(() -> this.ledger.rollbacks() > rollbacks);
		}
		// whatever of the run is still to come, after the transaction: nothing, or its write
		this.gate.release();
		ended.get(60, TimeUnit.SECONDS);
		assertThat(runs("t-gone")).isEmpty();
		assertThat(record("k-gone")).isNull();
		retriedOnce(http, "t-gone", "k-gone");
	}

	@Test
	void racingDuplicatesWriteOneTransferEachAndAllGetItsAnswer() {
		HttpClients http = new HttpClients(this.port);
		for (int i = 0; i < KEYS; i++) {
			String transfer = "t-race-" + i;
			String key = "k-race-" + i;
			List<CompletableFuture<HttpResponse<byte[]>>> racers = new ArrayList<>();
			for (int r = 0; r < RACERS; r++) {
				racers.add(http.sendAsync(http.request("/transfers/" + transfer, "{}", "Idempotency-Key", key)));
			}
			Set<Integer> statuses = new HashSet<>();
			for (CompletableFuture<HttpResponse<byte[]>> racer : racers) {
				HttpResponse<byte[]> answer = racer.join();
				statuses.add(answer.statusCode());
				if (answer.statusCode() == 201) {
					assertThat(List.of(run(answer))).as(transfer).isEqualTo(runs(transfer));
				}
			}
			assertThat(statuses).as(transfer).isSubsetOf(201, 409).contains(201);
			assertThat(runs(transfer)).as(transfer).hasSize(1);
			HttpResponse<byte[]> after = http.post("/transfers/" + transfer, "{}", "Idempotency-Key", key);
			assertThat(after.headers().firstValue("Idempotent-Replayed")).hasValue("true");
			assertThat(List.of(run(after))).isEqualTo(runs(transfer));
		}
	}

	/** The retry of a request whose transaction rolled back runs it, once; a replay follows. */
	private void retriedOnce(HttpClients http, String transfer, String key) {
		HttpResponse<byte[]> retry = http.post("/transfers/" + transfer, "{}", "Idempotency-Key", key);
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(runs(transfer)).containsExactly(run(retry));
		HttpResponse<byte[]> replay = http.post("/transfers/" + transfer, "{}", "Idempotency-Key", key);
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(replay.body()).isEqualTo(retry.body());
		assertThat(runs(transfer)).hasSize(1);
		assertThat(record(key)).isEqualTo("COMPLETED");
	}

	private List<String> runs(String transfer) {
		return new JdbcTemplate(database()).queryForList(
				"SELECT run_id FROM " + this.ledger.transfers + " WHERE transfer_id = ?", String.class, transfer);
	}

	/** The status of the key's record, as committed, or {@code null}. */
	private String record(String key) {
		List<String> found = new JdbcTemplate(database()).queryForList(
				"SELECT status FROM " + this.ledger.records + " WHERE idempotency_key LIKE ?", String.class,
				"%|" + key);
		return found.isEmpty() ? null : found.get(0);
	}

	private static String run(HttpResponse<byte[]> answer) {
		String body = new String(answer.body(), StandardCharsets.UTF_8);
		assertThat(body).startsWith("{\"run\":\"");
		return body.substring("{\"run\":\"".length(), body.length() - 2);
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@EnableTransactionManagement
	@Import(ReactiveWebTestApplication.Security.class)
	static class TransfersApplication {

		@Bean(destroyMethod = "dispose")
		ConnectionPool connectionFactory(@Value("${test.r2dbc-url}") String url) {
			return (ConnectionPool) ConnectionFactories.get(url);
		}

		@Bean
		DatabaseClient databaseClient(ConnectionFactory connectionFactory) {
			return DatabaseClient.create(connectionFactory);
		}

		@Bean
		Ledger transactionManager(ConnectionFactory connectionFactory, @Value("${test.transfers}") String transfers,
				@Value("${idempotency.r2dbc.table-name}") String records) {
			return new Ledger(connectionFactory, transfers, records);
		}

		@Bean
		Gate gate() {
			return new Gate();
		}

		@Bean
		TransferController transferController(DatabaseClient database, Gate gate, Ledger ledger) {
			return new TransferController(database, gate, ledger.transfers);
		}

	}

	/**
	 * The application's transaction manager, whose next commit the database can be made to
	 * refuse (the transaction is rolled back on the server and the commit fails, as a
	 * serialization failure or a lost connection at commit would), and which counts its
	 * rollbacks.
	 */
	static class Ledger extends R2dbcTransactionManager {

		final String transfers;

		final String records;

		private final AtomicBoolean refuseNextCommit = new AtomicBoolean();

		private final AtomicInteger rollbacks = new AtomicInteger();

		private final AtomicReference<Callable<String>> afterNextCommit = new AtomicReference<>();

		private final CompletableFuture<String> seenAfterCommit = new CompletableFuture<>();

		Ledger(ConnectionFactory connectionFactory, String transfers, String records) {
			super(connectionFactory);
			this.transfers = transfers;
			this.records = records;
		}

		void refuseNextCommit() {
			this.refuseNextCommit.set(true);
		}

		int rollbacks() {
			return this.rollbacks.get();
		}

		/** Runs {@code probe} once the next commit returned, before the transaction's synchronizations. */
		CompletableFuture<String> afterNextCommit(Callable<String> probe) {
			this.afterNextCommit.set(probe);
			return this.seenAfterCommit;
		}

		@Override
		protected Mono<Void> doCommit(TransactionSynchronizationManager synchronizations,
				GenericReactiveTransaction status) {
			if (!this.refuseNextCommit.getAndSet(false)) {
				Callable<String> probe = this.afterNextCommit.getAndSet(null);
				return (probe == null) ? super.doCommit(synchronizations, status)
						: super.doCommit(synchronizations, status)
							// the test's JDBC reads block: not on the event loop
							.then(Mono.fromCallable(probe).subscribeOn(Schedulers.boundedElastic()))
							.doOnNext(this.seenAfterCommit::complete)
							.doOnError(this.seenAfterCommit::completeExceptionally)
							.then();
			}
			ConnectionHolder holder = (ConnectionHolder) synchronizations.getResource(obtainConnectionFactory());
			return Mono.from(holder.getConnection().rollbackTransaction())
				.then(Mono.error(new TransactionSystemException("the database refused the commit")));
		}

		@Override
		protected Mono<Void> doRollback(TransactionSynchronizationManager synchronizations,
				GenericReactiveTransaction status) {
			return super.doRollback(synchronizations, status).doFinally((signal) -> this.rollbacks.incrementAndGet());
		}

	}

	/**
	 * Where the handler's run can be held (before its write) and made to fail (after it),
	 * and how its run ended.
	 */
	static class Gate {

		private final AtomicReference<CompletableFuture<Void>> entered = new AtomicReference<>();

		private final AtomicReference<CompletableFuture<Void>> released = new AtomicReference<>();

		private final AtomicReference<CompletableFuture<SignalType>> ended = new AtomicReference<>();

		private final AtomicBoolean holdNext = new AtomicBoolean();

		private final AtomicBoolean failNext = new AtomicBoolean();

		CompletableFuture<SignalType> holdNext() {
			this.entered.set(new CompletableFuture<>());
			this.released.set(new CompletableFuture<>());
			CompletableFuture<SignalType> end = new CompletableFuture<>();
			this.ended.set(end);
			this.holdNext.set(true);
			return end;
		}

		void awaitEntered() throws Exception {
			this.entered.get().get(60, TimeUnit.SECONDS);
		}

		void release() {
			this.released.get().complete(null);
		}

		void failNext() {
			this.failNext.set(true);
		}

		/** Held here when the test holds the next run, once it is subscribed; how it ends is then told. */
		<T> Mono<T> around(Mono<T> write) {
			if (!this.holdNext.getAndSet(false)) {
				return write;
			}
			CompletableFuture<SignalType> end = this.ended.get();
			// entered once the run is subscribed (not when the method is called): from then on
			// its end is told, a cancellation included
			return Mono.defer(() -> {
				this.entered.get().complete(null);
				return Mono.fromFuture(this.released.get());
			}).then(write).doFinally(end::complete);
		}

		Mono<Void> verdict() {
			return Mono.defer(() -> this.failNext.getAndSet(false)
					? Mono.error(new IllegalStateException("the transfer was declined")) : Mono.empty());
		}

	}

	@RestController
	static class TransferController {

		private final DatabaseClient database;

		private final Gate gate;

		private final String transfers;

		private final AtomicLong runs = new AtomicLong();

		TransferController(DatabaseClient database, Gate gate, String transfers) {
			this.database = database;
			this.gate = gate;
			this.transfers = transfers;
		}

		@PostMapping("/transfers/{id}")
		@Transactional
		@Idempotent
		public Mono<ResponseEntity<String>> transfer(@PathVariable String id) {
			// not a random UUID: SecureRandom reads a file, which BlockHound refuses on an event loop
			String run = "run-" + this.runs.incrementAndGet();
			Mono<Void> write = this.database
				.sql("INSERT INTO " + this.transfers + " (run_id, transfer_id) VALUES (:run, :id)")
				.bind("run", run)
				.bind("id", id)
				.then();
			return this.gate.around(write)
				.then(this.gate.verdict())
				.thenReturn(ResponseEntity.created(URI.create("/transfers/" + id)).body("{\"run\":\"" + run + "\"}"));
		}

	}

}
