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
 * a claim is one call of {@code claim_new.lua} per node (per hash slot on a cluster), one
 * {@code SET} per key inside it, and one more call of {@code claim.lua} per node (per slot)
 * holding keys whose lease or retention ran out; a completion is one script call per node
 * (per hash slot on a cluster). The single node is a private redis-server, so no other
 * test's calls are counted.
 */
class RedisBatchScriptCallsTest {

	private static final Pattern EVALSHA_CALLS = Pattern.compile("cmdstat_evalsha:calls=(\\d+)");

	private static final Pattern SET_CALLS = Pattern.compile("cmdstat_set:calls=(\\d+)");

	private static final Pattern MGET_CALLS = Pattern.compile("cmdstat_mget:calls=(\\d+)");

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
				warm(store, 2);
				long before = calls(nodes, EVALSHA_CALLS);
				long setsBefore = calls(nodes, SET_CALLS);
				List<ClaimResult> claimed = store.claimAll(requests(keys("k", 100)));
				assertThat(calls(nodes, EVALSHA_CALLS) - before).isEqualTo(1);
				assertThat(calls(nodes, SET_CALLS) - setsBefore).isEqualTo(100);
				assertThat(claimed).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.ACQUIRED);
				List<ClaimHandle> handles = claimed.stream().map(ClaimResult::acquiredHandle).toList();
				assertThat(store.completeAll(handles, Collections.nCopies(handles.size(), "\"done\"")))
					.containsOnly(true);
				assertThat(calls(nodes, EVALSHA_CALLS) - before).isEqualTo(2);
				assertThat(store.claimAll(requests(keys("k", 100)))).extracting(ClaimResult::outcome)
					.containsOnly(ClaimOutcome.DUPLICATE);
				assertThat(calls(nodes, EVALSHA_CALLS) - before).isEqualTo(3);
				assertThat(calls(nodes, SET_CALLS) - setsBefore).isEqualTo(200 + 100);
				// the workflow's latest batch was all duplicates: the next one reads first, one
				// call of read.lua (MGET), and with every key answered writes nothing
				long mgets = calls(nodes, MGET_CALLS);
				assertThat(store.claimAll(requests(keys("k", 100)))).extracting(ClaimResult::outcome)
					.containsOnly(ClaimOutcome.DUPLICATE);
				assertThat(calls(nodes, EVALSHA_CALLS) - before).isEqualTo(4);
				assertThat(calls(nodes, MGET_CALLS) - mgets).isEqualTo(1);
				assertThat(calls(nodes, SET_CALLS) - setsBefore).isEqualTo(200 + 100);
				// two leases run out: those two keys, and only they, go on to one call of claim.lua
				// (claimed in a batch of 100 new keys, after which the workflow no longer reads first)
				store.claimAll(requests(keys("short-", 100), Duration.ofSeconds(1)));
				this.clock.advance(Duration.ofSeconds(2));
				List<String> mixed = new ArrayList<>(keys("m", 10));
				mixed.add(3, "short-1");
				mixed.add("short-2");
				long scripts = calls(nodes, EVALSHA_CALLS);
				List<ClaimResult> taken = store.claimAll(requests(mixed));
				assertThat(taken).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.ACQUIRED);
				assertThat(taken.get(3).isTakeover()).isTrue();
				assertThat(calls(nodes, EVALSHA_CALLS) - scripts).isEqualTo(2);
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
				store.claimAll(requests(List.of("short-1", "short-2"), Duration.ofSeconds(1)));
				this.clock.advance(Duration.ofSeconds(2));
				onEachNode(List.of("127.0.0.1:" + server.port()), RedisCommands::scriptFlush);
				List<String> keys = new ArrayList<>(keys("k", 10));
				keys.add("short-1");
				List<ClaimResult> claimed = store.claimAll(requests(keys));
				assertThat(claimed).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.ACQUIRED);
				assertThat(claimed.get(10).isTakeover()).isTrue();
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
			warm(store, 30);
			// a closing brace ends the hash tag early: these ten keys share one slot
			List<String> keys = new ArrayList<>(keys("same}", 10));
			keys.addAll(keys("k", 30));
			Set<Integer> slots = new HashSet<>();
			keys.forEach((key) -> slots.add(SlotHash.getSlot(store.key(new RecordId(this.workflow, key)))));
			assertThat(slots).hasSizeBetween(2, 31);
			long before = calls(nodes, EVALSHA_CALLS);
			List<ClaimResult> claimed = store.claimAll(requests(keys));
			assertThat(calls(nodes, EVALSHA_CALLS) - before).isEqualTo(slots.size());
			assertThat(claimed).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.ACQUIRED);
			List<ClaimHandle> handles = claimed.stream().map(ClaimResult::acquiredHandle).toList();
			assertThat(store.completeAll(handles, Collections.nCopies(handles.size(), "\"done\""))).containsOnly(true);
			assertThat(calls(nodes, EVALSHA_CALLS) - before).isEqualTo(2L * slots.size());
			// delivered again twice: the second reads first (forty duplicates bring the workflow's
			// share of answered claims to 72 %, above the 70 % of ReadFirst.ADAPTIVE), one call of
			// read.lua per slot
			assertThat(store.claimAll(requests(keys))).extracting(ClaimResult::outcome)
				.containsOnly(ClaimOutcome.DUPLICATE);
			long reads = calls(nodes, EVALSHA_CALLS);
			long mgets = calls(nodes, MGET_CALLS);
			assertThat(store.claimAll(requests(keys))).extracting(ClaimResult::outcome)
				.containsOnly(ClaimOutcome.DUPLICATE);
			assertThat(calls(nodes, EVALSHA_CALLS) - reads).isEqualTo(slots.size());
			assertThat(calls(nodes, MGET_CALLS) - mgets).isEqualTo(slots.size());
			// leases that ran out on keys of several slots: one call of claim.lua per slot of them
			List<String> short_ = List.of("same}short-1", "same}short-2", "short-a", "short-b", "short-c");
			// claimed in a batch of 100 new keys, after which the workflow no longer reads first
			List<String> shortBatch = new ArrayList<>(short_);
			shortBatch.addAll(keys("fill", 95));
			store.claimAll(requests(shortBatch, Duration.ofSeconds(1)));
			this.clock.advance(Duration.ofSeconds(2));
			Set<Integer> shortSlots = new HashSet<>();
			short_.forEach((key) -> shortSlots.add(SlotHash.getSlot(store.key(new RecordId(this.workflow, key)))));
			List<String> mixed = new ArrayList<>(keys("m", 20));
			mixed.addAll(short_);
			Set<Integer> mixedSlots = new HashSet<>();
			mixed.forEach((key) -> mixedSlots.add(SlotHash.getSlot(store.key(new RecordId(this.workflow, key)))));
			long scripts = calls(nodes, EVALSHA_CALLS);
			List<ClaimResult> taken = store.claimAll(requests(mixed));
			assertThat(taken).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.ACQUIRED);
			assertThat(taken.subList(20, 25)).allSatisfy((result) -> assertThat(result.isTakeover()).isTrue());
			assertThat(calls(nodes, EVALSHA_CALLS) - scripts).isEqualTo(mixedSlots.size() + shortSlots.size());
		}
		finally {
			connectionFactory.destroy();
		}
	}

	/**
	 * Loads both scripts (the first call of a script on a node answers {@code NOSCRIPT},
	 * then is sent as {@code EVAL}): takes over {@code count} keys and completes them.
	 */
	private void warm(RedisIdempotencyStore store, int count) {
		List<String> keys = keys("warm", count);
		store.claimAll(requests(keys, Duration.ofSeconds(1)));
		this.clock.advance(Duration.ofSeconds(2));
		List<ClaimResult> taken = store.claimAll(requests(keys));
		assertThat(taken).extracting(ClaimResult::outcome).containsOnly(ClaimOutcome.ACQUIRED);
		store.completeAll(taken.stream().map(ClaimResult::acquiredHandle).toList(), Collections.nCopies(count, null));
	}

	private List<String> keys(String prefix, int count) {
		List<String> keys = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			keys.add(prefix + i);
		}
		return keys;
	}

	private List<ClaimRequest> requests(List<String> keys) {
		return requests(keys, LEASE);
	}

	private List<ClaimRequest> requests(List<String> keys, Duration lease) {
		return keys.stream()
			.map((key) -> new ClaimRequest(new RecordId(this.workflow, key), "owner-" + UUID.randomUUID(), null, lease,
					RETENTION))
			.toList();
	}

	private static long calls(List<String> nodes, Pattern command) {
		long calls = 0;
		for (String info : onEachNode(nodes, (node) -> node.info("commandstats"))) {
			Matcher matcher = command.matcher(info);
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
