package io.github.idempotency.store.jdbc;

import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import io.agroal.api.AgroalDataSource;
import io.agroal.api.configuration.supplier.AgroalDataSourceConfigurationSupplier;
import io.agroal.narayana.NarayanaTransactionIntegration;
import jakarta.transaction.Synchronization;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import com.arjuna.ats.arjuna.common.ObjectStoreEnvironmentBean;
import com.arjuna.ats.internal.jta.transaction.arjunacore.TransactionSynchronizationRegistryImple;
import com.arjuna.ats.jta.UserTransaction;
import com.arjuna.common.internal.util.propertyservice.BeanPopulator;
import io.github.idempotency.internal.JavaShape;
import io.github.idempotency.store.RecordStatus;
import org.springframework.core.Ordered;
import org.springframework.transaction.jta.JtaTransactionManager;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The jdbc store under JTA, as an application server or a Narayana starter runs it: an
 * embedded Narayana transaction manager, Spring's {@link JtaTransactionManager}, and an
 * Agroal pool that enlists its connections in the JTA transaction; each database is a
 * small subclass. No
 * connection of the store's {@code DataSource} is bound when the claim is made; the one
 * the claim takes is enlisted, so the claim joins the JTA transaction as it joins a
 * {@code DataSourceTransactionManager}'s: the writes and the record agree whether it
 * commits, rolls back, commits after a failure the caller caught, or fails to commit
 * ({@link CallerTransactionTests}), and the record commits finished, however long the
 * transaction ran.
 */
abstract class JtaTransactionTests extends CallerTransactionTests {

	static {
		// Narayana's transaction log, under target/ rather than the working directory
		String logs = "target/narayana";
		BeanPopulator.getDefaultInstance(ObjectStoreEnvironmentBean.class).setObjectStoreDir(logs);
		BeanPopulator.getNamedInstance(ObjectStoreEnvironmentBean.class, "communicationStore")
			.setObjectStoreDir(logs);
		BeanPopulator.getNamedInstance(ObjectStoreEnvironmentBean.class, "stateStore").setObjectStoreDir(logs);
	}

	private final ExecutorService otherInstance = Executors.newSingleThreadExecutor();

	/**
	 * @param database the database on a pool of its own
	 * @param url its JDBC URL, for the enlisting pool
	 * @param platform the schema file's platform
	 */
	JtaTransactionTests(DataSource database, String url, String platform) throws SQLException {
		super(database, platform, enlisting(url), (enlisting) -> jta());
	}

	private static AgroalDataSource enlisting(String url) throws SQLException {
		return AgroalDataSource.from(new AgroalDataSourceConfigurationSupplier()
			.connectionPoolConfiguration((pool) -> pool.maxSize(4)
				.transactionIntegration(new NarayanaTransactionIntegration(
						com.arjuna.ats.jta.TransactionManager.transactionManager(),
						new TransactionSynchronizationRegistryImple()))
				.connectionFactoryConfiguration((factory) -> factory.jdbcUrl(url))));
	}

	private static JtaTransactionManager jta() {
		JtaTransactionManager jta = new JtaTransactionManager(UserTransaction.userTransaction(),
				com.arjuna.ats.jta.TransactionManager.transactionManager());
		jta.afterPropertiesSet();
		return jta;
	}

	@Override
	void closeDataSource() {
		this.otherInstance.shutdownNow();
		((AgroalDataSource) this.dataSource).close();
	}

	/**
	 * A synchronization of the JTA transaction's own whose {@code beforeCompletion} throws,
	 * where JPA under JTA flushes.
	 */
	@Override
	void failTheCommit() {
		try {
			com.arjuna.ats.jta.TransactionManager.transactionManager()
				.getTransaction()
				.registerSynchronization(new Synchronization() {

					@Override
					public void beforeCompletion() {
						throw new IllegalStateException("The flush before the commit failed (made to fail by the test)");
					}

					@Override
					public void afterCompletion(int status) {
					}

				});
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(value = JavaShape.class, names = { "SINGLE", "BATCH_ELEMENT" })
	void aRunWhoseJtaTransactionCommitsIsCompletedWithItsWritesAndReplayed(JavaShape shape) throws Throwable {
		String key = "committed";
		assertThat(deliverInTransaction(shape, key, null)).isEqualTo("charged " + key);
		assertThat(this.store.find(id(key)).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(deliverInTransaction(shape, key, null)).isEqualTo("charged " + key);
		assertThat(effects(key)).isOne();
	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(value = JavaShape.class, names = { "SINGLE", "BATCH_ELEMENT" })
	void aRunWhoseJtaTransactionRollsBackLeavesNothingAndRunsAgain(JavaShape shape) throws Throwable {
		String key = "rolled-back";
		this.transactions.executeWithoutResult((status) -> {
			run(shape, key, null);
			status.setRollbackOnly();
		});
		assertThat(effects(key)).isZero();
		assertThat(this.store.find(id(key))).isEmpty();
		assertThat(deliverInTransaction(shape, key, null)).isEqualTo("charged " + key);
		assertThat(effects(key)).isOne();
	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(value = JavaShape.class, names = { "SINGLE", "BATCH_ELEMENT" })
	void aFailureTheCallerCatchesInAJtaTransactionThatCommitsIsRecordedWithTheWritesAndReplayed(JavaShape shape)
			throws Throwable {
		String key = "caught";
		assertThatExceptionOfType(IllegalStateException.class)
			.isThrownBy(() -> deliverInTransaction(shape, key, new IllegalStateException("declined after its write")));
		assertThat(this.store.find(id(key)).orElseThrow().status()).isEqualTo(RecordStatus.FAILED);
		assertFailureReplayed(shape,
				() -> deliverInTransaction(shape, key, new IllegalStateException("declined after its write")));
		assertThat(effects(key)).as("its writes committed once").isOne();
	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(value = JavaShape.class, names = { "SINGLE", "BATCH_ELEMENT" })
	void aRecordedFailureWhoseJtaTransactionRollsBackIsStoredAfterTheRollbackAndReplayed(JavaShape shape)
			throws Throwable {
		String key = "declined";
		assertThatExceptionOfType(CardDeclinedException.class).isThrownBy(() -> this.transactions
			.executeWithoutResult((status) -> run(shape, key, new CardDeclinedException())));
		assertThat(effects(key)).as("rolled back").isZero();
		assertThat(this.store.find(id(key)).orElseThrow().status()).isEqualTo(RecordStatus.FAILED);
		assertFailureReplayed(shape,
				() -> this.transactions.execute((status) -> run(shape, key, new CardDeclinedException())));
		assertThat(effects(key)).as("not run again").isZero();
	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(value = JavaShape.class, names = { "SINGLE", "BATCH_ELEMENT" })
	void aRedeliveryThatMeetsTheRecordAsTheJtaTransactionCommitsFindsItFinishedThoughTheLeaseRanOut(JavaShape shape) {
		String key = "outlived";
		List<Object> redelivered = new CopyOnWriteArrayList<>();
		this.transactions.executeWithoutResult((status) -> {
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

				@Override
				public int getOrder() {
					return Ordered.HIGHEST_PRECEDENCE;
				}

				@Override
				public void afterCommit() {
					// first thing after the commit: a redelivery on another instance
					try {
						redelivered.add(JtaTransactionTests.this.otherInstance.submit(() -> run(shape, key, null))
							.get(30, TimeUnit.SECONDS));
					}
					catch (Exception ex) {
						redelivered.add(ex);
					}
				}

			});
			run(shape, key, null);
			// the transaction outlived the claim's lease
			this.clock.advance(LEASE.plusSeconds(1));
		});
		assertThat(redelivered).containsExactly("charged " + key);
		assertThat(effects(key)).as("run once").isOne();
		assertThat(this.store.find(id(key)).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);
	}

	/**
	 * A read-only JTA transaction is refused as a read-only transaction of the data
	 * source's own is: the claim would have to write in it. Nothing runs, nothing is stored.
	 */
	@ParameterizedTest(name = "{0}")
	@EnumSource(value = JavaShape.class, names = { "SINGLE", "BATCH_ELEMENT" })
	void aReadOnlyJtaTransactionRefusesTheClaimAndNothingRuns(JavaShape shape) {
		TransactionTemplate readOnly = new TransactionTemplate(this.transactions.getTransactionManager());
		readOnly.setReadOnly(true);
		assertThatIllegalStateException().isThrownBy(() -> readOnly.execute((status) -> run(shape, "read-only", null)))
			.withMessageContaining("read-only transaction");
		assertThat(effects("read-only")).isZero();
		assertThat(this.store.find(id("read-only"))).isEmpty();
	}

}
