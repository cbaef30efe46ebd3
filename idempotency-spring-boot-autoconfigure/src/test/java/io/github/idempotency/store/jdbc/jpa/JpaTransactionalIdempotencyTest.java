package io.github.idempotency.store.jdbc.jpa;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import io.github.idempotency.IdempotentFailureReplayedException;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.testservers.TestServers;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.persistence.autoconfigure.EntityScan;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.annotation.EnableTransactionManagement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * {@code @Transactional @Idempotent} with Spring Data JPA on PostgreSQL: the record and the
 * entity commit or roll back together, with the advisors in their default order and with
 * a transaction advisor given the highest precedence.
 */
class JpaTransactionalIdempotencyTest {

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		registry.add("spring.datasource.url", TestServers::postgresUrl);
		registry.add("spring.datasource.hikari.maximum-pool-size", () -> "20");
		registry.add("spring.jpa.hibernate.ddl-auto", () -> "update");
		registry.add("idempotency.jdbc.initialize-schema", () -> "always");
		registry.add("spring.jpa.open-in-view", () -> "false");
	}

	/** The advisors in their default order: the idempotency advice runs inside the transaction's. */
	@Nested
	@SpringBootTest(classes = Application.class)
	class DefaultOrder extends Scenarios {

	}

	/** The transaction advisor outside the idempotency advisor: the claim joins it. */
	@Nested
	@SpringBootTest(classes = { Application.class, TransactionFirst.class })
	class TransactionOutside extends Scenarios {

	}

	abstract static class Scenarios {

		@Autowired
		PaymentService payments;

		@Autowired
		IdempotencyStore store;

		private final String prefix = UUID.randomUUID().toString();

		@Test
		void entityAndRecordCommitTogetherAndADuplicateWritesNothing() {
			PaymentService.Receipt first = this.payments.pay(this.prefix + "-1", 10);
			PaymentService.Receipt second = this.payments.pay(this.prefix + "-1", 99);
			assertThat(second).isEqualTo(first);
			assertThat(this.payments.payments(this.prefix)).isOne();
			assertThat(record(this.prefix + "-1").status()).isEqualTo(RecordStatus.COMPLETED);
		}

		@Test
		void theRecordIsPartOfTheTransactionSoOthersSeeItOnlyAfterTheCommit() throws Exception {
			RecordId id = new RecordId("jpa-payment", this.prefix + "-1");
			List<Object> seenFromOutside = new ArrayList<>();
			this.payments.payWhile(id.key(), () -> {
				ExecutorService outside = Executors.newSingleThreadExecutor();
				try {
					seenFromOutside.add(outside.submit(() -> this.store.find(id)).get(10, TimeUnit.SECONDS));
					seenFromOutside.add(outside.submit(() -> this.payments.payments(this.prefix))
						.get(10, TimeUnit.SECONDS));
				}
				catch (Exception ex) {
					throw new IllegalStateException(ex);
				}
				finally {
					outside.shutdownNow();
				}
			});
			assertThat(seenFromOutside).containsExactly(java.util.Optional.empty(), 0L);
			assertThat(record(id.key()).status()).isEqualTo(RecordStatus.COMPLETED);
			assertThat(this.payments.payments(this.prefix)).isOne();
		}

		@Test
		void rollbackLeavesNeitherEntityNorRecord() {
			assertThatExceptionOfType(IllegalStateException.class)
				.isThrownBy(() -> this.payments.payThenFail(this.prefix + "-1"));
			assertThat(this.payments.payments(this.prefix)).isZero();
			assertThat(this.store.find(new RecordId("jpa-payment", this.prefix + "-1"))).isEmpty();
			assertThat(this.payments.pay(this.prefix + "-1", 5)).isNotNull();
			assertThat(this.payments.payments(this.prefix)).isOne();
		}

		@Test
		void aReadOnlyTransactionRefusesTheClaim() {
			assertThatIllegalStateException().isThrownBy(() -> this.payments.lookUp(this.prefix + "-1"))
				.withMessageContaining("read-only transaction");
			assertThat(this.store.find(new RecordId("jpa-lookup", this.prefix + "-1"))).isEmpty();
		}

		@Test
		void resultThatCannotBeStoredIsRecordedFailedWithTheEntitySoItIsNeverRunAgain() {
			Object result = this.payments.payWithUnwritableResult(this.prefix + "-1");
			assertThat(result).isNotNull();
			assertThat(this.payments.payments(this.prefix)).isOne();
			assertThat(this.store.find(new RecordId("jpa-payment", this.prefix + "-1")).orElseThrow().status())
				.isEqualTo(RecordStatus.FAILED);
			assertThatExceptionOfType(IdempotentFailureReplayedException.class)
				.isThrownBy(() -> this.payments.payWithUnwritableResult(this.prefix + "-1"))
				.withMessageContaining("cannot be written");
			assertThat(this.payments.payments(this.prefix)).isOne();
		}

		@Test
		void racingDuplicatesChargeEachKeyOnce() throws Exception {
			List<String> deliveries = new ArrayList<>();
			for (int key = 0; key < 100; key++) {
				for (int copy = 0; copy < 3; copy++) {
					deliveries.add(this.prefix + "-" + key);
				}
			}
			Collections.shuffle(deliveries);
			ExecutorService executor = Executors.newFixedThreadPool(8);
			try {
				List<Future<PaymentService.Receipt>> results = new ArrayList<>();
				for (String key : deliveries) {
					results.add(executor.submit(() -> this.payments.pay(key, 7)));
				}
				for (Future<PaymentService.Receipt> result : results) {
					assertThat(result.get(60, TimeUnit.SECONDS).amount()).isEqualTo(7);
				}
			}
			finally {
				executor.shutdownNow();
			}
			assertThat(this.payments.payments(this.prefix)).isEqualTo(100);
		}

		private io.github.idempotency.store.IdempotencyRecord record(String key) {
			return this.store.find(new RecordId("jpa-payment", key)).orElseThrow();
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@EntityScan(basePackageClasses = Payment.class)
	static class Application {

		@Bean
		PaymentService paymentService() {
			return new PaymentService();
		}

	}

	@EnableTransactionManagement(order = Ordered.HIGHEST_PRECEDENCE)
	static class TransactionFirst {

	}

}
