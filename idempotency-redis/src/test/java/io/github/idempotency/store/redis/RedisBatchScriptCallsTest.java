package io.github.idempotency.store.redis;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.Test;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.test.MutableClock;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.testservers.RedisConnections;
import io.github.idempotency.testservers.RedisServerProcess;
import io.github.idempotency.testservers.TestServers;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How many script calls a batch costs, counted by the servers ({@code INFO commandstats}):
 * one on a single node, one per hash slot on a cluster. The single node is a private
 * redis-server, so no other test's calls are counted.
 */
class RedisBatchScriptCallsTest {

	private static final Pattern EVALSHA_CALLS = Pattern.compile("cmdstat_evalsha:calls=(\\d+)");

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration RETENTION = Duration.ofHours(1);

	private final MutableClock clock = new MutableClock(Instant.now());

	private final String workflow = "calls-" + UUID.randomUUID();

	@Test
	void aBatchOnASingleNodeIsOneScriptCallToClaimAndOneToComplete() {
		try (RedisServerProcess server = new RedisServerProcess().start()) {
			LettuceConnectionFactory connectionFactory = RedisConnections.standalone(server.url());
			try {
				RedisIdempotencyStore store = new RedisIdempotencyStore(connectionFactory, "calls", this.clock);
				List<String> nodes = List.of("127.0.0.1:" + server.port());
				// the first call of a script after a start answers NOSCRIPT, then loads it
				store.claimAll(requests(List.of("warm-1", "warm-2")));
				long before = evalshaCalls(nodes);
				List<ClaimResult> claimed = store.claimAll(requests(keys("k", 100)));
				assertThat(evalshaCalls(nodes) - before).isEqualTo(1);
				assertThat(claimed).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.ACQUIRED);
				List<ClaimHandle> handles = claimed.stream().map(ClaimResult::acquiredHandle).toList();
				assertThat(store.completeAll(handles, Collections.nCopies(handles.size(), "\"done\"")))
					.containsOnly(true);
				assertThat(evalshaCalls(nodes) - before).isEqualTo(2);
				assertThat(store.claimAll(requests(keys("k", 100)))).extracting(ClaimResult::outcome)
					.containsOnly(ClaimOutcome.DUPLICATE);
				assertThat(evalshaCalls(nodes) - before).isEqualTo(3);
			}
			finally {
				connectionFactory.destroy();
			}
		}
	}

	@Test
	void aBatchAfterTheScriptCacheWasFlushedLoadsTheScriptsAgain() {
		try (RedisServerProcess server = new RedisServerProcess().start()) {
			LettuceConnectionFactory connectionFactory = RedisConnections.standalone(server.url());
			try {
				RedisIdempotencyStore store = new RedisIdempotencyStore(connectionFactory, "calls", this.clock);
				store.claimAll(requests(List.of("warm-1", "warm-2")));
				onEachNode(List.of("127.0.0.1:" + server.port()), RedisCommands::scriptFlush);
				List<ClaimResult> claimed = store.claimAll(requests(keys("k", 10)));
				assertThat(claimed).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.ACQUIRED);
				onEachNode(List.of("127.0.0.1:" + server.port()), RedisCommands::scriptFlush);
				List<ClaimHandle> handles = claimed.stream().map(ClaimResult::acquiredHandle).toList();
				assertThat(store.completeAll(handles, Collections.nCopies(handles.size(), null))).containsOnly(true);
			}
			finally {
				connectionFactory.destroy();
			}
		}
	}

	@Test
	void aBatchOnAClusterIsOneScriptCallPerHashSlot() {
		List<String> nodes = Arrays.asList(TestServers.redisClusterNodes().split(","));
		LettuceConnectionFactory connectionFactory = RedisConnections.cluster(String.join(",", nodes));
		try {
			RedisIdempotencyStore store = new RedisIdempotencyStore(connectionFactory, "calls", this.clock);
			store.claimAll(requests(keys("warm", 30)));
			// a closing brace ends the hash tag early: these ten keys share one slot
			List<String> keys = new ArrayList<>(keys("same}", 10));
			keys.addAll(keys("k", 30));
			Set<Integer> slots = new HashSet<>();
			keys.forEach((key) -> slots.add(SlotHash.getSlot(store.key(new RecordId(this.workflow, key)))));
			assertThat(slots).hasSizeBetween(2, 31);
			long before = evalshaCalls(nodes);
			List<ClaimResult> claimed = store.claimAll(requests(keys));
			assertThat(evalshaCalls(nodes) - before).isEqualTo(slots.size());
			assertThat(claimed).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.ACQUIRED);
			List<ClaimHandle> handles = claimed.stream().map(ClaimResult::acquiredHandle).toList();
			assertThat(store.completeAll(handles, Collections.nCopies(handles.size(), "\"done\""))).containsOnly(true);
			assertThat(evalshaCalls(nodes) - before).isEqualTo(2L * slots.size());
		}
		finally {
			connectionFactory.destroy();
		}
	}

	private List<String> keys(String prefix, int count) {
		List<String> keys = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			keys.add(prefix + i);
		}
		return keys;
	}

	private List<ClaimRequest> requests(List<String> keys) {
		return keys.stream()
			.map((key) -> new ClaimRequest(new RecordId(this.workflow, key), "owner-" + UUID.randomUUID(), null, LEASE,
					RETENTION))
			.toList();
	}

	private static long evalshaCalls(List<String> nodes) {
		long calls = 0;
		for (String info : onEachNode(nodes, (node) -> node.info("commandstats"))) {
			Matcher matcher = EVALSHA_CALLS.matcher(info);
			if (matcher.find()) {
				calls += Long.parseLong(matcher.group(1));
			}
		}
		return calls;
	}

	private static List<String> onEachNode(List<String> nodes, Function<RedisCommands<String, String>, String> command) {
		RedisClient client = RedisClient.create();
		try {
			List<String> answers = new ArrayList<>();
			for (String node : nodes) {
				String[] hostAndPort = node.split(":");
				try (StatefulRedisConnection<String, String> connection = client
					.connect(RedisURI.create(hostAndPort[0], Integer.parseInt(hostAndPort[1])))) {
					answers.add(command.apply(connection.sync()));
				}
			}
			return answers;
		}
		finally {
			client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
		}
	}

}
