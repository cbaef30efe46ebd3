package io.github.idempotency.store.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.stream.IntStream;

import io.lettuce.core.LettuceFutures;
import io.lettuce.core.api.async.BaseRedisAsyncCommands;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.ClaimRules;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import org.springframework.core.io.ClassPathResource;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.DecoratedRedisConnection;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.SetCondition;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.RedisOperations;
import org.springframework.data.redis.core.SessionCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.data.redis.core.types.Expiration;
import org.springframework.data.redis.serializer.RedisSerializer;
import org.springframework.util.Assert;

/**
 * A store of one Redis string per record, through Spring Data Redis (Lettuce): single
 * node, Sentinel or Cluster.
 * <p>
 * The record of a key is {@code <prefix>:{<workflow length>:<workflow>:<key>}}: the
 * length keeps workflow and key apart (no two pairs give the same text), and the braces
 * are a Redis Cluster hash tag over the whole record id (a closing brace inside the
 * workflow or key ends the tag early, which is harmless: every command touches one key).
 * Its value is the compact layout of {@link CompactRecord} (version 1: a version byte, the
 * status, the numbers as varints, the texts length-prefixed); records of version 0, a hash
 * of one field per column, are read as they are and rewritten in the compact layout by the
 * first script that changes them.
 * <p>
 * A claim is one native command, {@code SET key record NX GET PX lease+retention}
 * (Redis 7.0 or later): it writes the new record when the key is free, and otherwise
 * answers the record found, from which the claim decides on the client
 * ({@link ClaimRules#decide}) a duplicate, a failure, a mismatch or a live claim, with no
 * script. Only what needs a conditional write goes to the {@code claim.lua} script: a
 * record whose lease or retention ran out (a takeover, or a new record in its place), a
 * record of version 0 ({@code WRONGTYPE}), and every claim on a server that does not
 * take {@code NX} with {@code GET} (before 7.0). Complete, fail, release, renew and
 * save-recovery-point are Lua scripts (resources next to this class, each preceded by
 * {@code record.lua}, the layout in Lua: {@code finish.lua} for complete and fail,
 * {@code release.lua}, {@code renew.lua} for renew and save-recovery-point), one round
 * trip each, fenced by owner; Spring Data Redis sends them with {@code EVALSHA} and falls
 * back to {@code EVAL} when the server answers {@code NOSCRIPT}.
 * <p>
 * A batch ({@link #claimAll}, {@link #completeAll}) runs scripts that take any number of
 * keys: one call with every key on a single node, one call per cluster hash slot on Redis
 * Cluster, all sent through Lettuce's asynchronous API before any answer is awaited, so a
 * batch costs one round trip per node (a connection that is not Lettuce's goes key by
 * key). Its claim is the single claim's {@code SET NX GET PX} for every key inside one
 * script ({@code claim_new.lua}, which decodes nothing), then {@code claim.lua} for the
 * few keys that need a conditional write.
 * <p>
 * A claim's handle keeps the value it wrote; {@code finish.lua} writes the finished record
 * the handle built when the record still is that value (one {@code GET}, one compare, one
 * {@code SET}, nothing decoded), and otherwise (renewed, a recovery point saved, taken
 * over, of layout 0) reads the record and finishes it only when it is still the claim's.
 * <p>
 * Time comes from the given {@link Clock}: the claim and the scripts compare the caller's
 * "now" with the record's {@code lease_until} and {@code expires_at}, so the lease and
 * retention are logical. On top, every write sets a physical time to live so Redis drops
 * what is over: {@code lease + retention} while {@code IN_PROGRESS}, from the claim and
 * from every renewal and recovery point (not only the lease: a run that crashed, however
 * long it ran, keeps its attempt and recovery point for the run that takes it over), the
 * retention once finished. These are relative durations, never absolute times, so a
 * clock far from Redis's own cannot make a key vanish early.
 * <p>
 * With {@link #setReplicaWait(int, Duration)}, a completion or failure is followed by
 * {@code WAIT} on the same connection, so it returns once that many replicas hold the
 * record (or the timeout passed: then a WARN is logged and the result still stands).
 */
public final class RedisIdempotencyStore implements IdempotencyStore {

	private static final Log logger = LogFactory.getLog(RedisIdempotencyStore.class);

	/** The default prefix of the keys. */
	public static final String DEFAULT_KEY_PREFIX = "idempotency";

	private static final RedisScript<List> CLAIM = script("claim.lua", List.class);

	private static final RedisScript<List> FINISH = script("finish.lua", List.class);

	private static final SlotGroupedScript CLAIM_ALL = new SlotGroupedScript(CLAIM);

	private static final SlotGroupedScript CLAIM_NEW_ALL = new SlotGroupedScript(plainScript("claim_new.lua"));

	private static final SlotGroupedScript READ_ALL = new SlotGroupedScript(plainScript("read.lua"));

	private static final Consumer<RedisConnection> NOTHING_AFTERWARDS = (connection) -> {
	};

	private static final SlotGroupedScript FINISH_ALL = new SlotGroupedScript(FINISH);

	private static final RedisScript<Long> RELEASE = script("release.lua", Long.class);

	private static final RedisScript<Long> RENEW = script("renew.lua", Long.class);

	/** Script arguments: bytes as they are, anything else as its text. */
	private static final RedisSerializer<Object> ARGUMENTS = new RedisSerializer<>() {

		@Override
		public byte[] serialize(@Nullable Object value) {
			return SlotGroupedScript.argument(value);
		}

		@Override
		public @Nullable Object deserialize(byte @Nullable [] bytes) {
			return bytes;
		}

	};

	/** Script replies: bulk strings as bytes. */
	@SuppressWarnings("rawtypes")
	private static final RedisSerializer RESULT = RedisSerializer.byteArray();

	private final RedisConnectionFactory connectionFactory;

	private final StringRedisTemplate redis;

	private final Duration batchTimeout;

	private final String keyPrefix;

	private final Clock clock;

	private final AtomicBoolean clusterWarned = new AtomicBoolean();

	/** Set once the server refused {@code SET ... NX GET} (before Redis 7.0): claims by script. */
	private volatile boolean claimByScriptOnly;

	private int waitReplicas;

	private Duration waitTimeout = Duration.ofSeconds(1);

	/**
	 * Runs after a batch's {@code SET NX GET} step and before its keys that need a
	 * conditional write go to {@code claim.lua}: a test's way into that window.
	 */
	@Nullable Runnable beforeClaimScript;

	/**
	 * Runs after a batch's read and before its {@code SET NX GET} step: a test's way into
	 * that window.
	 */
	@Nullable Runnable beforeClaimNew;

	/** The workflows whose latest batch was answered from records for the most part. */
	private final Map<String, Boolean> readsFirst = new ConcurrentHashMap<>();

	/**
	 * Creates a store on the application's connection factory.
	 * @param connectionFactory the Redis connections
	 * @param keyPrefix the first part of every key, such as {@value #DEFAULT_KEY_PREFIX}
	 * @param clock the time leases and retention are measured on
	 */
	public RedisIdempotencyStore(RedisConnectionFactory connectionFactory, String keyPrefix, Clock clock) {
		Assert.hasText(keyPrefix, "'keyPrefix' must not be empty");
		Assert.isTrue(keyPrefix.indexOf('{') < 0 && keyPrefix.indexOf('}') < 0,
				"'keyPrefix' must not contain braces: they would move the cluster hash tag");
		this.connectionFactory = connectionFactory;
		this.redis = new StringRedisTemplate(connectionFactory);
		// the store's own callbacks never close the connection: no guarding proxy per call
		this.redis.setExposeConnection(true);
		this.batchTimeout = (connectionFactory instanceof LettuceConnectionFactory lettuce)
				? Duration.ofMillis(lettuce.getTimeout()) : Duration.ofMinutes(1);
		this.keyPrefix = keyPrefix;
		this.clock = clock;
	}

	/**
	 * Makes completions and failures wait until {@code replicas} replicas acknowledged
	 * them, up to {@code timeout} (Redis {@code WAIT}). Ignored, with a WARN, on Redis
	 * Cluster, where the command would not run on the connection that wrote the record.
	 * @param replicas how many replicas, 0 not to wait
	 * @param timeout the longest wait, positive when {@code replicas} is not 0
	 */
	public void setReplicaWait(int replicas, Duration timeout) {
		Assert.isTrue(replicas >= 0, "'replicas' must not be negative");
		Assert.isTrue(replicas == 0 || (!timeout.isNegative() && !timeout.isZero()),
				"'timeout' must be positive: WAIT with a timeout of 0 blocks for ever");
		this.waitReplicas = replicas;
		this.waitTimeout = timeout;
	}

	@Override
	public ClaimResult claim(ClaimRequest request) {
		long now = now();
		if (this.claimByScriptOnly) {
			return claimByScript(request, now);
		}
		Instant at = Instant.ofEpochMilli(now);
		IdempotencyRecord fresh = ClaimRules.claimed(null, request, at);
		byte[] key = bytes(key(request.id()));
		byte[] ownerToken = CompactRecord.token(request.owner());
		byte[] value = CompactRecord.encode(fresh, ownerToken);
		Expiration ttl = Expiration.milliseconds(request.leaseTtl().toMillis() + request.retention().toMillis());
		byte[] found;
		try {
			found = this.redis.execute(
					(RedisCallback<byte[]>) (connection) -> connection.stringCommands().setGet(key, value,
							SetCondition.ifAbsent(), ttl));
		}
		catch (DataAccessException ex) {
			if (isWrongType(ex)) {
				// a record of layout 0: the script reads it
				return claimByScript(request, now);
			}
			if (isSyntaxError(ex)) {
				noSetWithNxAndGet();
				return claimByScript(request, now);
			}
			throw ex;
		}
		if (found == null) {
			return ClaimResult.acquired(fresh, new RedisClaim(request, fresh, value, key, ownerToken));
		}
		ClaimResult answered = answered(request, found, at);
		return (answered != null) ? answered : claimByScript(request, now);
	}

	/**
	 * Answers the keys whose record the read found and decided (a duplicate, a failure, a
	 * mismatch, a live claim); a record that needs a conditional write goes to the claim
	 * script, as after {@code SET NX GET}.
	 * @return the positions of the keys the read found no record of, in order: they are
	 * claimed with {@code SET NX GET}, which answers a record written since the read
	 */
	private static int[] answer(List<ClaimRequest> requests, SlotGroupedScript.Replies found, Instant at,
			@Nullable ClaimResult[] results, List<Integer> byScript) {
		int[] unread = new int[requests.size()];
		int count = 0;
		for (int i = 0; i < unread.length; i++) {
			if (found.replies[i] instanceof byte[] value) {
				results[i] = answered(requests.get(i), value, at);
				if (results[i] == null) {
					byScript.add(i);
				}
			}
			else {
				unread[count++] = i;
			}
		}
		return Arrays.copyOf(unread, count);
	}

	/**
	 * The answer a record found for a claim gives: a duplicate, a failure, a mismatch or a
	 * live claim; {@code null} when the record is over or its lease ran out, which only the
	 * claim script may replace, atomically.
	 */
	private static @Nullable ClaimResult answered(ClaimRequest request, byte[] value, Instant at) {
		IdempotencyRecord existing = CompactRecord.decode(request.id(), value);
		ClaimOutcome outcome = ClaimRules.decide(existing, request.fingerprint(), at);
		return (outcome != ClaimOutcome.ACQUIRED) ? ClaimResult.of(outcome, existing) : null;
	}

	private ClaimResult claimByScript(ClaimRequest request, long now) {
		List<Object> args = new ArrayList<>(5);
		args.add(String.valueOf(now));
		args.addAll(Arrays.asList(claimArguments(request)));
		List<?> replies = execute(CLAIM, key(request.id()), args.toArray());
		Assert.state(replies != null && replies.size() == 1, "The claim script answered nothing");
		return claimed(request, (List<?>) replies.get(0), now);
	}

	/**
	 * Claims the records in two steps. First {@code claim_new.lua}, one call per cluster
	 * hash slot (one call on a single node), all sent before any answer is awaited: for
	 * each key {@code SET key record NX GET PX ttl}, nothing decoded on the server, so a
	 * free key is claimed and a taken one answers its value, decided on the client as a
	 * single claim is. Then, only for the keys that need a conditional write (a record whose
	 * lease or retention ran out, a record of layout 0), {@code claim.lua}, which decides
	 * again atomically. A key named twice is written by its first {@code SET} only (one
	 * slot, one call, in order): the second answers the first's live claim. When a call
	 * fails, the claims the others acquired are released before its failure is thrown.
	 * <p>
	 * When more than half of the workflow's previous batch was answered from records, a
	 * read ({@code read.lua}) comes first: a key whose record it finds is decided from that
	 * record as above, and only the others go to {@code claim_new.lua}, whose
	 * {@code SET NX GET} answers a record written since the read. A redelivered batch of
	 * duplicates then costs one read and writes nothing; a batch of new keys after it pays
	 * that read once, and the batch after it no longer reads.
	 */
	@Override
	public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
		if (requests.size() <= 1) {
			return requests.isEmpty() ? List.of() : List.of(claim(requests.get(0)));
		}
		long now = now();
		int size = requests.size();
		@Nullable ClaimResult[] results = new ClaimResult[size];
		List<Integer> byScript = new ArrayList<>();
		RuntimeException failure = null;
		if (this.claimByScriptOnly) {
			for (int i = 0; i < size; i++) {
				byScript.add(i);
			}
		}
		else {
			Instant at = Instant.ofEpochMilli(now);
			String workflow = requests.get(0).id().workflow();
			int[] unread = IntStream.range(0, size).toArray();
			if (this.readsFirst.getOrDefault(workflow, false)) {
				List<SlotGroupedScript.Call> reads = new ArrayList<>(size);
				for (ClaimRequest request : requests) {
					reads.add(new SlotGroupedScript.Call(bytes(key(request.id()))));
				}
				SlotGroupedScript.Replies found = READ_ALL.run(this.connectionFactory, List.of(), reads,
						this.batchTimeout, NOTHING_AFTERWARDS);
				if (found == null) {
					return IdempotencyStore.super.claimAll(requests);
				}
				RuntimeException unreadable = found.failure();
				if (unreadable != null) {
					// nothing claimed yet
					throw unreadable;
				}
				unread = answer(requests, found, at, results, byScript);
				if (this.beforeClaimNew != null) {
					this.beforeClaimNew.run();
				}
			}
			if (unread.length > 0) {
				List<IdempotencyRecord> fresh = new ArrayList<>(unread.length);
				List<byte[]> ownerTokens = new ArrayList<>(unread.length);
				List<SlotGroupedScript.Call> calls = new ArrayList<>(unread.length);
				for (int i : unread) {
					ClaimRequest request = requests.get(i);
					IdempotencyRecord record = ClaimRules.claimed(null, request, at);
					byte[] ownerToken = CompactRecord.token(request.owner());
					fresh.add(record);
					ownerTokens.add(ownerToken);
					calls.add(new SlotGroupedScript.Call(bytes(key(request.id())),
							CompactRecord.encode(record, ownerToken),
							number(request.leaseTtl().toMillis() + request.retention().toMillis())));
				}
				SlotGroupedScript.Replies replies = CLAIM_NEW_ALL.run(this.connectionFactory, List.of(), calls,
						this.batchTimeout, NOTHING_AFTERWARDS);
				if (replies == null) {
					return IdempotencyStore.super.claimAll(requests);
				}
				failure = replies.failure();
				for (int j = 0; j < unread.length; j++) {
					int i = unread[j];
					Object reply = replies.replies[j];
					ClaimRequest request = requests.get(i);
					try {
						if (reply == null) {
							// its call failed: the failure above
							continue;
						}
						if (reply instanceof Long) {
							SlotGroupedScript.Call call = calls.get(j);
							byte[] written = call.arguments()[0];
							results[i] = ClaimResult.acquired(fresh.get(j),
									new RedisClaim(request, fresh.get(j), written, call.key(), ownerTokens.get(j)));
						}
						else if (reply instanceof byte[] value) {
							results[i] = answered(request, value, at);
							if (results[i] == null) {
								byScript.add(i);
							}
						}
						else {
							String error = text(((List<?>) reply).get(0));
							if (error.startsWith("WRONGTYPE")) {
								// a record of layout 0: the claim script reads it
								byScript.add(i);
							}
							else if (error.startsWith("ERR syntax error")) {
								noSetWithNxAndGet();
								byScript.add(i);
							}
							else {
								throw new RedisSystemException("Redis refused the claim of " + request.id()
										+ ": " + error, null);
							}
						}
					}
					catch (RuntimeException ex) {
						failure = failed(failure, ex);
					}
				}
			}
			int answered = 0;
			for (ClaimResult result : results) {
				answered += (result != null && result.outcome() != ClaimOutcome.ACQUIRED) ? 1 : 0;
			}
			this.readsFirst.put(workflow, 2 * answered > size);
		}
		if (failure == null && !byScript.isEmpty()) {
			if (this.beforeClaimScript != null) {
				this.beforeClaimScript.run();
			}
			failure = claimByScript(requests, byScript, now, results);
		}
		if (failure != null) {
			for (ClaimResult result : results) {
				if (result != null && result.handle() != null) {
					try {
						result.handle().release(failure);
					}
					catch (RuntimeException releaseFailure) {
						failure.addSuppressed(releaseFailure);
					}
				}
			}
			throw failure;
		}
		return Arrays.asList(results);
	}

	/**
	 * Claims the requests at {@code positions} with one {@code claim.lua} call per cluster
	 * hash slot (one on a single node), answering in {@code results} those it claimed.
	 * @return the first failure of a call, or {@code null}
	 */
	private @Nullable RuntimeException claimByScript(List<ClaimRequest> requests, List<Integer> positions, long now,
			@Nullable ClaimResult[] results) {
		List<SlotGroupedScript.Call> calls = new ArrayList<>(positions.size());
		for (int i : positions) {
			ClaimRequest request = requests.get(i);
			calls.add(new SlotGroupedScript.Call(bytes(key(request.id())), claimArguments(request)));
		}
		SlotGroupedScript.Replies replies = CLAIM_ALL.run(this.connectionFactory, List.of(String.valueOf(now)), calls,
				this.batchTimeout, (connection) -> {
				});
		if (replies == null) {
			for (int i : positions) {
				results[i] = claim(requests.get(i));
			}
			return null;
		}
		for (int j = 0; j < positions.size(); j++) {
			Object reply = replies.replies[j];
			if (reply != null) {
				int i = positions.get(j);
				results[i] = claimed(requests.get(i), (List<?>) reply, now);
			}
		}
		return replies.failure();
	}

	private static RuntimeException failed(@Nullable RuntimeException first, RuntimeException next) {
		if (first == null) {
			return next;
		}
		if (first != next) {
			first.addSuppressed(next);
		}
		return first;
	}

	private void noSetWithNxAndGet() {
		if (!this.claimByScriptOnly) {
			logger.info("This Redis server does not take SET with both NX and GET (Redis 7.0 or later does): "
					+ "every claim runs the claim script");
			this.claimByScriptOnly = true;
		}
	}

	/**
	 * Completes the claims with one {@code finish.lua} call per cluster hash slot (one call
	 * on a single node), all sent before any answer is awaited, each record fenced by its
	 * owner. Handles of another store go the default way.
	 */
	@Override
	public List<Boolean> completeAll(List<ClaimHandle> handles, List<@Nullable String> responses) {
		Assert.isTrue(handles.size() == responses.size(), "One response per handle is required");
		if (handles.size() <= 1 || !handles.stream().allMatch(this::isOwnClaim)) {
			return IdempotencyStore.super.completeAll(handles, responses);
		}
		long now = now();
		List<SlotGroupedScript.Call> calls = new ArrayList<>(handles.size());
		for (int i = 0; i < handles.size(); i++) {
			RedisClaim claim = (RedisClaim) handles.get(i);
			calls.add(new SlotGroupedScript.Call(claim.key,
					claim.finishArguments(now, RecordStatus.COMPLETED, responses.get(i), null, null)));
		}
		AtomicReference<@Nullable Object> acknowledged = new AtomicReference<>();
		SlotGroupedScript.Replies replies = FINISH_ALL.run(this.connectionFactory, List.of(String.valueOf(now)), calls,
				this.batchTimeout, (connection) -> {
					if (this.waitReplicas > 0) {
						acknowledged.set(waitForReplicas(connection));
					}
				});
		if (replies == null) {
			return IdempotencyStore.super.completeAll(handles, responses);
		}
		List<Boolean> completed = new ArrayList<>(handles.size());
		for (Object reply : replies.replies) {
			completed.add(reply instanceof Long finished && finished == 1L);
		}
		if (replies.failure() != null) {
			throw replies.failure();
		}
		if (this.waitReplicas > 0) {
			reportReplicas(acknowledged.get(), handles.size() + " records of a batch");
		}
		return completed;
	}

	private boolean isOwnClaim(ClaimHandle handle) {
		return handle instanceof RedisClaim claim && claim.store() == this;
	}

	private static byte[][] claimArguments(ClaimRequest request) {
		return new byte[][] { CompactRecord.token(request.owner()),
				(request.fingerprint() != null) ? CompactRecord.token(request.fingerprint()) : new byte[0],
				number(request.leaseTtl().toMillis()), number(request.retention().toMillis()) };
	}

	private ClaimResult claimed(ClaimRequest request, List<?> reply, long now) {
		Assert.state(!reply.isEmpty(), "The claim script answered nothing");
		ClaimOutcome outcome = ClaimOutcome.valueOf(text(reply.get(0)));
		// a new record: the script wrote exactly what the rules say, and sent nothing back
		IdempotencyRecord record = (reply.size() == 1) ? ClaimRules.claimed(null, request, Instant.ofEpochMilli(now))
				: CompactRecord.decode(request.id(), (byte[]) reply.get(1));
		if (outcome != ClaimOutcome.ACQUIRED) {
			return ClaimResult.of(outcome, record);
		}
		// a takeover answers the value it wrote; a new record's value is not known here
		return ClaimResult.acquired(record, new RedisClaim(request, record,
				(reply.size() == 1) ? null : (byte[]) reply.get(1), bytes(key(request.id())),
				CompactRecord.token(request.owner())));
	}

	@Override
	public Optional<IdempotencyRecord> find(RecordId id) {
		String key = key(id);
		IdempotencyRecord record;
		try {
			byte[] value = this.redis.execute((RedisCallback<byte[]>) (connection) -> connection.stringCommands()
				.get(bytes(key)));
			if (value == null) {
				return Optional.empty();
			}
			record = CompactRecord.decode(id, value);
		}
		catch (DataAccessException ex) {
			if (!isWrongType(ex)) {
				throw ex;
			}
			// a record of layout 0, read as it is
			Map<String, String> fields = new HashMap<>();
			this.redis.<String, String>opsForHash().entries(key).forEach(fields::put);
			if (fields.isEmpty()) {
				return Optional.empty();
			}
			record = record(id, fields);
		}
		return record.isExpired(this.clock.instant()) ? Optional.empty() : Optional.of(record);
	}

	@Override
	public boolean delete(RecordId id) {
		return Boolean.TRUE.equals(this.redis.delete(key(id)));
	}

	@Override
	public String backend() {
		return "redis";
	}

	/**
	 * The Redis key of a record.
	 * @param id the record
	 * @return {@code <prefix>:{<workflow length>:<workflow>:<key>}}
	 */
	String key(RecordId id) {
		return this.keyPrefix + ":{" + id.workflow().length() + ":" + id.workflow() + ":" + id.key() + "}";
	}

	private boolean finish(RedisClaim claim, RecordStatus status, @Nullable String response,
			@Nullable String errorType, @Nullable String errorMessage) {
		RecordId id = claim.request.id();
		List<String> keys = List.of(key(id));
		long now = now();
		List<Object> args = new ArrayList<>(5);
		args.add(String.valueOf(now));
		args.addAll(Arrays.asList(claim.finishArguments(now, status, response, errorType, errorMessage)));
		if (this.waitReplicas == 0) {
			return isFinished(execute(FINISH, keys.get(0), args.toArray()));
		}
		Boolean finished = this.redis.execute(new SessionCallback<>() {
			@Override
			@SuppressWarnings("unchecked")
			public Boolean execute(RedisOperations operations) throws DataAccessException {
				// the session binds one connection: WAIT counts the writes made on it
				boolean owned = isFinished(
						(List<?>) operations.execute(FINISH, ARGUMENTS, RESULT, keys, args.toArray()));
				if (owned) {
					waitForReplicas(operations, id.toString());
				}
				return owned;
			}
		});
		return Boolean.TRUE.equals(finished);
	}

	private static boolean isFinished(@Nullable List<?> reply) {
		return reply != null && reply.size() == 1 && Long.valueOf(1L).equals(reply.get(0));
	}

	// the callback answers null on Redis Cluster, as RedisCallback allows (T extends @Nullable
	// Object): NullAway reads that bound only in JSpecify mode, which Java 17 does not run
	@SuppressWarnings("NullAway")
	private void waitForReplicas(RedisOperations<?, ?> operations, String what) {
		reportReplicas(operations.execute((RedisCallback<Object>) this::waitForReplicas), what);
	}

	/**
	 * Sends {@code WAIT} on the connection that wrote.
	 * @return how many replicas acknowledged, or {@code null} on Redis Cluster
	 */
	private @Nullable Object waitForReplicas(RedisConnection connection) {
		RedisConnection target = (connection instanceof DecoratedRedisConnection decorated) ? decorated.getDelegate()
				: connection;
		if (target instanceof RedisClusterConnection) {
			return null;
		}
		long timeout = this.waitTimeout.toMillis();
		if (target.getNativeConnection() instanceof BaseRedisAsyncCommands<?, ?> lettuce) {
			// the connection Spring Data Redis's Lettuce connection sends its commands on
			return LettuceFutures.awaitOrCancel(lettuce.waitForReplication(this.waitReplicas, timeout), timeout + 5000,
					TimeUnit.MILLISECONDS);
		}
		return target.execute("WAIT", bytes(String.valueOf(this.waitReplicas)), bytes(String.valueOf(timeout)));
	}

	private void reportReplicas(@Nullable Object acknowledged, String what) {
		if (acknowledged == null) {
			if (this.clusterWarned.compareAndSet(false, true)) {
				logger.warn("idempotency.redis.wait-replicas is ignored on Redis Cluster: WAIT would not run on "
						+ "the connection that wrote the record");
			}
		}
		else if (!(acknowledged instanceof Long count) || count < this.waitReplicas) {
			logger.warn("Only " + acknowledged + " of " + this.waitReplicas + " Redis replicas acknowledged " + what
					+ " within " + this.waitTimeout + "; a failover now could lose it");
		}
	}

	private long now() {
		return this.clock.millis();
	}

	private static String text(Object reply) {
		return (reply instanceof byte[] bytes) ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(reply);
	}

	/** Whether Redis answered {@code WRONGTYPE}: the key holds a hash, a record of layout 0. */
	private static boolean isWrongType(Throwable failure) {
		return messageStartsWith(failure, "WRONGTYPE");
	}

	private static boolean isSyntaxError(Throwable failure) {
		return messageStartsWith(failure, "ERR syntax error");
	}

	private static boolean messageStartsWith(Throwable failure, String prefix) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause.getMessage() != null && cause.getMessage().startsWith(prefix)) {
				return true;
			}
		}
		return false;
	}

	/** A field every stored record of layout 0 has. */
	private static String required(Map<String, String> fields, String name) {
		return Objects.requireNonNull(fields.get(name), () -> "the stored record has no " + name);
	}

	/** A record of layout 0, a hash of one field per column. */
	private static IdempotencyRecord record(RecordId id, Map<String, String> fields) {
		return new IdempotencyRecord(id, RecordStatus.valueOf(required(fields, "status")), fields.get("fingerprint"),
				required(fields, "owner"), Integer.parseInt(fields.get("attempt")), instant(fields, "lease_until"),
				fields.get("recovery_point"), fields.get("response"), fields.get("error_type"),
				fields.get("error_message"), instant(fields, "created_at"), instant(fields, "updated_at"),
				instant(fields, "expires_at"));
	}

	private static Instant instant(Map<String, String> fields, String name) {
		return Instant.ofEpochMilli(Long.parseLong(fields.get(name)));
	}

	private static boolean isOne(@Nullable Long reply) {
		return reply != null && reply == 1L;
	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

	/** A number as a script argument: its decimal text. */
	private static byte[] number(long value) {
		return bytes(Long.toString(value));
	}

	/**
	 * A script of this store, read once (a {@code RedisScript} made from a
	 * {@code Resource} checks the resource for changes on every call): {@code record.lua},
	 * the record's layout, then the script itself.
	 */
	private static <T> RedisScript<T> script(String name, Class<T> resultType) {
		try {
			return RedisScript.of(read("record.lua") + "\n" + read(name), resultType);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read the Redis script " + name, ex);
		}
	}

	/** A script of this store that does not read records: without {@code record.lua}. */
	private static RedisScript<List> plainScript(String name) {
		try {
			return RedisScript.of(read(name), List.class);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read the Redis script " + name, ex);
		}
	}

	private static String read(String name) throws IOException {
		return new ClassPathResource(name, RedisIdempotencyStore.class).getContentAsString(StandardCharsets.UTF_8);
	}

	/**
	 * Runs a script on one key, its arguments sent as they are (bytes) or as their text,
	 * its bulk replies answered as bytes.
	 */
	@SuppressWarnings("unchecked")
	private <T> @Nullable T execute(RedisScript<T> script, String key, Object... args) {
		return this.redis.execute(script, ARGUMENTS, (RedisSerializer<T>) RESULT, List.of(key), args);
	}

	/**
	 * A claim held by its lease: each step is one script, fenced by the owner. It keeps the
	 * record it claimed and, while it knows it, the value that record has in Redis (the
	 * value it wrote, until a renewal or a recovery point changes it), so that its
	 * completion can compare values instead of reading the record; and, made once, its
	 * Redis key and its owner's token.
	 */
	private final class RedisClaim implements ClaimHandle {

		private final ClaimRequest request;

		private final IdempotencyRecord claimed;

		private volatile byte @Nullable [] written;

		private final byte[] key;

		private final byte[] ownerToken;

		RedisClaim(ClaimRequest request, IdempotencyRecord claimed, byte @Nullable [] written, byte[] key,
				byte[] ownerToken) {
			this.request = request;
			this.claimed = claimed;
			this.written = written;
			this.key = key;
			this.ownerToken = ownerToken;
		}

		RedisIdempotencyStore store() {
			return RedisIdempotencyStore.this;
		}

		/**
		 * The arguments of {@code finish.lua} for this claim: owner token, retention, the
		 * value the record is expected to have ({@code ''} when not known, or when that
		 * value is over at {@code now}) and the finished record as this claim would write it.
		 */
		byte[][] finishArguments(long now, RecordStatus status, @Nullable String response,
				@Nullable String errorType, @Nullable String errorMessage) {
			IdempotencyRecord claimed = this.claimed;
			byte[] expected = this.written;
			if (expected == null || claimed.expiresAt().toEpochMilli() <= now) {
				expected = new byte[0];
			}
			Instant at = Instant.ofEpochMilli(now);
			long retention = this.request.retention().toMillis();
			IdempotencyRecord finished = new IdempotencyRecord(claimed.id(), status, claimed.fingerprint(),
					claimed.owner(), claimed.attempt(), claimed.leaseUntil(), claimed.recoveryPoint(), response,
					errorType, errorMessage, claimed.createdAt(), at, at.plusMillis(retention));
			return new byte[][] { this.ownerToken, number(retention), expected,
					CompactRecord.encode(finished, this.ownerToken) };
		}

		@Override
		public boolean complete(@Nullable String response) {
			return finish(this, RecordStatus.COMPLETED, response, null, null);
		}

		@Override
		public boolean fail(Throwable failure) {
			return finish(this, RecordStatus.FAILED, null, IdempotencyRecord.errorTypeOf(failure),
					IdempotencyRecord.errorMessageOf(failure));
		}

		@Override
		public boolean release(Throwable failure) {
			return isOne(execute(RELEASE, key(this.request.id()), this.ownerToken,
					String.valueOf(now())));
		}

		@Override
		public boolean renew() {
			// from now on the value in Redis is not the one written
			this.written = null;
			long now = now();
			return isOne(execute(RENEW, key(this.request.id()), this.ownerToken,
					String.valueOf(now), String.valueOf(now + this.request.leaseTtl().toMillis()),
					String.valueOf(this.request.retention().toMillis())));
		}

		@Override
		public boolean saveRecoveryPoint(String recoveryPoint) {
			this.written = null;
			long now = now();
			return isOne(execute(RENEW, key(this.request.id()), this.ownerToken,
					String.valueOf(now), String.valueOf(now + this.request.leaseTtl().toMillis()),
					String.valueOf(this.request.retention().toMillis()), recoveryPoint));
		}

	}

}
