package io.github.idempotency.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.testservers.RedisConnections;
import io.github.idempotency.testservers.RedisServerProcess;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code idempotency.redis.wait-replicas} on a private master with one replica.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisIdempotencyStoreReplicaWaitTest {

	private static final Duration RETENTION = Duration.ofHours(1);

	private final RedisServerProcess master = new RedisServerProcess("--repl-diskless-sync-delay", "0").start();

	private final RedisServerProcess replica = new RedisServerProcess("--replicaof", "127.0.0.1",
			String.valueOf(this.master.port())).start();

	private final LettuceConnectionFactory masterConnections = RedisConnections.standalone(this.master.url());

	private final LettuceConnectionFactory replicaConnections = RedisConnections.standalone(this.replica.url());

	private final RedisIdempotencyStore store = new RedisIdempotencyStore(this.masterConnections, "wait",
			Clock.systemUTC());

	@AfterEach
	void stop() {
		this.masterConnections.destroy();
		this.replicaConnections.destroy();
		this.replica.close();
		this.master.close();
	}

	@Test
	void aCompletionReturnsOnceTheReplicaHoldsIt(CapturedOutput output) {
		StringRedisTemplate onReplica = new StringRedisTemplate(this.replicaConnections);
		await().atMost(30, TimeUnit.SECONDS)
			.pollInterval(Duration.ofMillis(50))
			.until(() -> "up".equals(onReplica
				.execute((RedisCallback<Properties>) (connection) -> connection.serverCommands().info("replication"))
				.getProperty("master_link_status")));
		this.store.setReplicaWait(1, Duration.ofSeconds(10));
		RecordId id = new RecordId("wait", "k1");
		assertThat(this.store.claim(new ClaimRequest(id, "owner-1", null, Duration.ofSeconds(30), RETENTION))
			.acquiredHandle()
			.complete("\"done\"")).isTrue();
		byte[] replicated = onReplica.execute((RedisCallback<byte[]>) (connection) -> connection.stringCommands()
			.get(this.store.key(id).getBytes(StandardCharsets.UTF_8)));
		assertThat(CompactRecord.decode(id, replicated).status()).isEqualTo(RecordStatus.COMPLETED);
		assertThat(output).doesNotContain("replicas acknowledged");
	}

	@Test
	void withoutEnoughReplicasTheCompletionStandsWithAWarning(CapturedOutput output) {
		this.store.setReplicaWait(2, Duration.ofMillis(100));
		RecordId id = new RecordId("wait", "k1");
		assertThat(this.store.claim(new ClaimRequest(id, "owner-1", null, Duration.ofSeconds(30), RETENTION))
			.acquiredHandle()
			.fail(new IllegalStateException("no"))).isTrue();
		assertThat(this.store.find(id)).hasValueSatisfying(
				(record) -> assertThat(record.errorType()).isEqualTo(IllegalStateException.class.getName()));
		assertThat(output).contains("of 2 Redis replicas acknowledged workflow 'wait' key 'k1'");
	}

}
