package io.github.idempotency.store.redis;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyRecord;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.ReadFirst;
import io.github.idempotency.store.RecordId;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.util.Assert;

/**
 * A store of one Redis string per record, through Spring Data Redis (Lettuce): single
 * node, Sentinel or Cluster.
 * <p>
 * The record of a key is {@code <prefix>:{<workflow length>:<workflow>:<key>}}: the
 * length keeps workflow and key apart (no two pairs give the same text), and the braces
 * are a Redis Cluster hash tag over the whole record id (a closing brace inside the
 * workflow or key ends the tag early, which is harmless: every command touches one key).
 * Its value is a compact binary record with a layout version in its first byte.
 * <p>
 * A claim is one native command, {@code SET key record NX GET PX lease+retention} (Redis
 * 7.0 or later): it writes the new record when the key is free, and otherwise answers the
 * record found, decided on the client; only a record whose lease or retention ran out
 * goes on to a claim script, which decides again atomically. Complete, fail, release,
 * renew and save-recovery-point are one script call each, fenced by the owner. A batch
 * ({@link #claimAll}, {@link #completeAll}) costs one script call per node (per hash slot
 * on Redis Cluster); it reads first as {@link #setReadFirst} says.
 * <p>
 * Time comes from the given {@link Clock}: leases and retention are compared with the
 * caller's "now", so they are logical. On top, every write sets a physical time to live,
 * relative, never absolute: {@code lease + retention} while {@code IN_PROGRESS} (from the
 * claim and from every renewal and recovery point), the retention once finished.
 * <p>
 * With {@link #setReplicaWait(int, Duration)}, a completion or failure is followed by
 * {@code WAIT} on the same connection, so it returns once that many replicas hold the
 * record (or the timeout passed: then a WARN is logged and the result still stands).
 */
public final class RedisIdempotencyStore implements IdempotencyStore {

	/** The default prefix of the keys. */
	public static final String DEFAULT_KEY_PREFIX = "idempotency";

	private final RedisAccess access;

	private final ReplicaWait replicaWait = new ReplicaWait();

	private final Completions completions;

	private final SingleClaim single;

	private final BatchClaim batch;

	/**
	 * Creates a store on the application's connection factory.
	 * @param connectionFactory the Redis connections
	 * @param keyPrefix the first part of every key, such as {@value #DEFAULT_KEY_PREFIX}
	 * @param clock the time leases and retention are measured on
	 */
	public RedisIdempotencyStore(RedisConnectionFactory connectionFactory, String keyPrefix, Clock clock) {
		RedisAccess.checkKeyPrefix(keyPrefix);
		this.access = new RedisAccess(connectionFactory, keyPrefix, clock);
		LegacyFallbacks legacy = new LegacyFallbacks();
		this.completions = new Completions(this.access, this.replicaWait);
		this.single = new SingleClaim(this.access, this.completions, legacy);
		this.batch = new BatchClaim(this.access, this.single, legacy);
	}

	/**
	 * Makes completions and failures wait until {@code replicas} replicas acknowledged
	 * them, up to {@code timeout} (Redis {@code WAIT}). Ignored, with a WARN, on Redis
	 * Cluster, where the command would not run on the connection that wrote the record.
	 * @param replicas how many replicas, 0 not to wait
	 * @param timeout the longest wait, positive when {@code replicas} is not 0
	 */
	public void setReplicaWait(int replicas, Duration timeout) {
		this.replicaWait.set(replicas, timeout);
	}

	/**
	 * Whether a batch reads its keys before it claims them, so that a batch of duplicates
	 * is answered by the read alone and writes nothing ({@link ReadFirst#ADAPTIVE} by
	 * default: per workflow, while most of its recent batch elements were answered from
	 * records). A single claim never reads first: its {@code SET NX GET} answers a
	 * duplicate in the same round trip.
	 * @param readFirst never, per workflow by the share of duplicates, or always
	 */
	public void setReadFirst(ReadFirst readFirst) {
		Assert.notNull(readFirst, "'readFirst' must not be null");
		this.batch.setReadFirst(readFirst);
	}

	@Override
	public ClaimResult claim(ClaimRequest request) {
		return this.single.claim(request);
	}

	/**
	 * Claims the records in one script call per node (per hash slot on Redis Cluster) and
	 * step: a read first when the workflow reads first, the single claim's
	 * {@code SET NX GET} for every key not answered by it, and the claim script for the
	 * keys that need a conditional write. A key named twice is acquired once; when a call
	 * fails, the claims the others acquired are released before its failure is thrown.
	 */
	@Override
	public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
		if (requests.size() <= 1) {
			return requests.isEmpty() ? List.of() : List.of(claim(requests.get(0)));
		}
		List<ClaimResult> claimed = this.batch.claimAll(requests);
		// null: a connection that is not Lettuce's, which goes key by key
		return (claimed != null) ? claimed : IdempotencyStore.super.claimAll(requests);
	}

	/**
	 * Completes the claims with one script call per node (per hash slot on Redis Cluster),
	 * each record fenced by its owner. Handles of another store go the default way.
	 */
	@Override
	public List<Boolean> completeAll(List<ClaimHandle> handles, List<@Nullable String> responses) {
		Assert.isTrue(handles.size() == responses.size(), "One response per handle is required");
		if (handles.size() <= 1 || !handles.stream().allMatch(this::isOwnClaim)) {
			return IdempotencyStore.super.completeAll(handles, responses);
		}
		List<Boolean> completed = this.completions.completeAll(handles, responses);
		// null: a connection that is not Lettuce's, which goes key by key
		return (completed != null) ? completed : IdempotencyStore.super.completeAll(handles, responses);
	}

	private boolean isOwnClaim(ClaimHandle handle) {
		return handle instanceof RedisClaim claim && claim.isOf(this.completions);
	}

	@Override
	public Optional<IdempotencyRecord> find(RecordId id) {
		String key = key(id);
		IdempotencyRecord record;
		try {
			byte[] value = this.access.redis
				.execute((RedisCallback<byte[]>) (connection) -> connection.stringCommands().get(RedisAccess.bytes(key)));
			record = (value != null) ? CompactRecord.decode(id, value) : null;
		}
		catch (DataAccessException ex) {
			if (!LegacyFallbacks.isLayout0(ex)) {
				throw ex;
			}
			record = LegacyFallbacks.readLayout0(this.access.redis, id, key);
		}
		return (record == null || record.isExpired(this.access.clock().instant())) ? Optional.empty()
				: Optional.of(record);
	}

	@Override
	public boolean delete(RecordId id) {
		return Boolean.TRUE.equals(this.access.redis.delete(key(id)));
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
		return this.access.key(id);
	}

}
