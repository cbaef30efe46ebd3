package io.github.idempotency.store.jdbc;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

import javax.sql.XAConnection;
import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;

import org.junit.jupiter.api.Test;
import org.postgresql.xa.PGXADataSource;

import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.test.MutableClock;
import io.github.idempotency.testservers.TestDatabases;
import io.github.idempotency.testservers.TestServers;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A connection of an XA branch (as a JTA transaction manager hands it out) is taken as it
 * is: pgjdbc reports it in auto-commit and refuses to switch it, and the store's steps run
 * in the branch and commit with it, never on their own.
 */
class PostgresJdbcXaConnectionTest {

	private static final String TABLE = "idempotency_xa_test";

	@Test
	void aClaimOnAConnectionOfAnXaTransactionRunsInThatTransaction() throws Exception {
		TestDatabases.createTable(TestDatabases.postgres(), "postgresql", TABLE);
		PGXADataSource xaDataSource = new PGXADataSource();
		xaDataSource.setUrl(TestServers.postgresUrl());
		RecordId id = new RecordId("xa", UUID.randomUUID().toString());
		XAConnection xaConnection = xaDataSource.getXAConnection();
		try {
			XAResource resource = xaConnection.getXAResource();
			Xid xid = new TestXid();
			resource.start(xid, XAResource.TMNOFLAGS);
			Connection connection = xaConnection.getConnection();
			JdbcIdempotencyStore store = new JdbcIdempotencyStore(new SingleConnectionDataSource(connection, true), TABLE,
					Duration.ofSeconds(5), new MutableClock(Instant.now()));
			assertThat(store.claim(new ClaimRequest(id, "owner", null, Duration.ofSeconds(30), Duration.ofDays(1)))
				.acquiredHandle()
				.complete("\"done\"")).isTrue();
			assertThat(committed(id)).isNull();
			resource.end(xid, XAResource.TMSUCCESS);
			resource.commit(xid, true);
		}
		finally {
			xaConnection.close();
		}
		assertThat(committed(id)).isEqualTo(RecordStatus.COMPLETED.name());
	}

	private static String committed(RecordId id) {
		return JdbcClient.create(TestDatabases.postgres())
			.sql("SELECT status FROM " + TABLE + " WHERE workflow = ? AND idempotency_key = ?")
			.params(id.workflow(), id.key())
			.query(String.class)
			.optional()
			.orElse(null);
	}

	private static final class TestXid implements Xid {

		private final byte[] id = UUID.randomUUID().toString().getBytes(StandardCharsets.US_ASCII);

		@Override
		public int getFormatId() {
			return 4242;
		}

		@Override
		public byte[] getGlobalTransactionId() {
			return this.id;
		}

		@Override
		public byte[] getBranchQualifier() {
			return new byte[] { 1 };
		}

	}

}
