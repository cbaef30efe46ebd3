package io.github.idempotency.store.redis;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import io.lettuce.core.cluster.SlotHash;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotencyStoreException;
import io.github.idempotency.IdempotencyTemplate;
import io.github.idempotency.IdempotentRequest;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.internal.DefaultIdempotencyTemplate;
import io.github.idempotency.internal.EngineSettings;
import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.metrics.MicrometerIdempotencyObserver;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.testservers.RedisConnections;
import io.github.idempotency.testservers.RedisServerProcess;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A batch on a private Redis Cluster of three masters, one of which is down: the keys of
 * every master are claimed in one call per hash slot, so some calls succeed and others
 * fail.
 */
class RedisClusterPartialOutageTest {

	private static final String WORKFLOW = "partial";

	private final List<RedisServerProcess> masters = RedisServerProcess.startClusterMasters();

	private final LettuceConnectionFactory connectionFactory = RedisConnections
		.cluster(RedisServerProcess.nodes(this.masters));

	private final RedisIdempotencyStore store = new RedisIdempotencyStore(this.connectionFactory, "partial",
			Clock.systemUTC());

	private final IdempotencyEngine engine = new IdempotencyEngine(this.store, JsonMapper.builder().build(),
			EngineSettings.builder()
					.leaseRenewal(false)
					.retention(Duration.ofHours(1))
					.onInProgress(InProgressPolicy.REJECT)
					.waitTimeout(Duration.ZERO)
					.build(),
			new MicrometerIdempotencyObserver(new SimpleMeterRegistry(), "redis"));

	private final IdempotencyTemplate template = new DefaultIdempotencyTemplate(this.engine);

	private final List<String> runs = new CopyOnWriteArrayList<>();

	@AfterEach
	void stop() {
		this.engine.close();
		this.connectionFactory.destroy();
		this.masters.forEach(RedisServerProcess::close);
	}

	@Test
	void aBatchWithKeysOnAMasterThatIsDownRunsNothingHoldsNothingAndRunsEachKeyOnceWhenItIsBack() {
		List<String> keys = IntStream.range(0, 30).mapToObj((i) -> "k" + i).toList();
		assertThat(keys.stream().map(this::master).distinct()).as("keys on every master").hasSize(3);
		RedisServerProcess down = this.masters.get(2);
		down.stop();
		assertThatExceptionOfType(IdempotencyStoreException.class).isThrownBy(this::deliver);
		assertThat(this.runs).isEmpty();
		// what the masters still up had claimed was given back: nothing waits for a lease
		keys.stream()
			.filter((key) -> master(key) != 2)
			.forEach((key) -> assertThat(this.store.find(id(key))).as(key).isEmpty());
		down.start();
		await().atMost(30, TimeUnit.SECONDS)
			.pollInterval(Duration.ofMillis(100))
			.ignoreExceptions()
			.until(() -> keys.stream().allMatch((key) -> this.store.find(id(key)).isEmpty()));
		assertThat(deliver()).hasSize(keys.size());
		assertThat(this.runs).containsExactlyInAnyOrderElementsOf(keys);
		assertThat(deliver()).hasSize(keys.size());
		assertThat(this.runs).hasSameSizeAs(keys);
	}

	private List<String> deliver() {
		List<IdempotentRequest> requests = IntStream.range(0, 30)
			.mapToObj((i) -> IdempotentRequest.of(WORKFLOW, "k" + i))
			.toList();
		return this.template.executeAll(requests, String.class, (request) -> {
			this.runs.add((String) request.key());
			return "ran " + request.key();
		});
	}

	/**
	 * The master that holds {@code key}: each holds a third of the slots, in order.
	 */
	private int master(String key) {
		return SlotHash.getSlot(this.store.key(id(key))) * this.masters.size() / SlotHash.SLOT_COUNT;
	}

	private static RecordId id(String key) {
		return new RecordId(WORKFLOW, key);
	}

}
