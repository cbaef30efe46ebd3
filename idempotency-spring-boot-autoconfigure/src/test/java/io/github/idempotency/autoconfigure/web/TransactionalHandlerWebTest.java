package io.github.idempotency.autoconfigure.web;

import java.net.http.HttpResponse;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

import io.github.idempotency.Idempotent;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code @Transactional @Idempotent} handler method on the jdbc store (H2): its claim is
 * made before its transaction begins and settled once the response is written, after the
 * transaction ended. A commit that fails gives the key back, so that the retry runs the
 * request again, and its writes, once.
 */
@SpringBootTest(classes = { WebTestApplication.class, TransactionalHandlerWebTest.Transfers.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotency.backend=jdbc", "idempotency.jdbc.initialize-schema=always",
				"spring.datasource.url=jdbc:h2:mem:web-transactions;DB_CLOSE_DELAY=-1",
				"spring.autoconfigure.exclude=org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration,"
						+ "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration" })
class TransactionalHandlerWebTest {

	@LocalServerPort
	int port;

	@Autowired
	Ledger ledger;

	@Autowired
	JdbcClient jdbc;

	@Test
	void aCommitThatFailsGivesTheKeyBackAndTheRetryRunsOnce() {
		this.jdbc.sql("CREATE TABLE IF NOT EXISTS transfer (id VARCHAR(64) PRIMARY KEY)").update();
		HttpClients http = new HttpClients(this.port);
		this.ledger.failNextCommit();
		HttpResponse<byte[]> failed = http.post("/transfers/t-1", "{}", "Idempotency-Key", "k-transfer");
		assertThat(failed.statusCode()).isEqualTo(500);
		assertThat(count()).isZero();
		HttpResponse<byte[]> retry = http.post("/transfers/t-1", "{}", "Idempotency-Key", "k-transfer");
		HttpResponse<byte[]> replay = http.post("/transfers/t-1", "{}", "Idempotency-Key", "k-transfer");
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(replay.body()).isEqualTo(retry.body());
		assertThat(count()).isOne();
	}

	private long count() {
		return this.jdbc.sql("SELECT COUNT(*) FROM transfer").query(Long.class).single();
	}

	@Configuration(proxyBeanMethods = false)
	static class Transfers {

		@Bean
		Ledger ledger(JdbcClient jdbc) {
			return new Ledger(jdbc);
		}

		@Bean
		TransferController transferController(Ledger ledger) {
			return new TransferController(ledger);
		}

	}

	/** The application's writes; a participant that fails marks the whole transaction rollback-only. */
	static class Ledger {

		private final AtomicBoolean failNextCommit = new AtomicBoolean();

		private final JdbcClient jdbc;

		Ledger(JdbcClient jdbc) {
			this.jdbc = jdbc;
		}

		/** The next transaction's participant fails (the test holds a proxy: state is reached through methods). */
		public void failNextCommit() {
			this.failNextCommit.set(true);
		}

		@Transactional
		public void record(String id) {
			this.jdbc.sql("INSERT INTO transfer (id) VALUES (?)").param(id).update();
		}

		@Transactional
		public void check() {
			if (this.failNextCommit.getAndSet(false)) {
				throw new IllegalStateException("a participant failed: the transaction can only roll back");
			}
		}

	}

	@RestController
	static class TransferController {

		private final Ledger ledger;

		TransferController(Ledger ledger) {
			this.ledger = ledger;
		}

		@PostMapping("/transfers/{id}")
		@Transactional
		@Idempotent
		public String transfer(@PathVariable String id) {
			this.ledger.record(id);
			try {
				this.ledger.check();
			}
			catch (IllegalStateException ex) {
				// caught: the method returns, and its commit fails (UnexpectedRollbackException)
			}
			return "transferred " + id;
		}

	}

}
