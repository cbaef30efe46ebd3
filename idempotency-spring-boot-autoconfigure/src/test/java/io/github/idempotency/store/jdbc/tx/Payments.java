package io.github.idempotency.store.jdbc.tx;

import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import io.github.idempotency.Idempotent;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;

/**
 * Business writes (a row per effect) and their idempotency, in every propagation. Each
 * method returns a value unique to its run, so a replay is told from a second run.
 */
public class Payments {

	private final JdbcClient jdbc;

	private final Map<String, Integer> reads = new ConcurrentHashMap<>();

	public Payments(JdbcClient jdbc) {
		this.jdbc = jdbc;
		jdbc.sql("CREATE TABLE IF NOT EXISTS tx_boundary_effect (effect_key VARCHAR(255) NOT NULL)").update();
	}

	@Transactional
	@Idempotent(key = "#key", workflow = "required")
	public String required(String key) {
		return write(key);
	}

	@Transactional(propagation = Propagation.REQUIRES_NEW)
	@Idempotent(key = "#key", workflow = "requires-new")
	public String requiresNew(String key) {
		return write(key);
	}

	@Transactional(propagation = Propagation.REQUIRES_NEW)
	@Idempotent(key = "#key", workflow = "protected")
	protected String requiresNewProtected(String key) {
		return write(key);
	}

	@Transactional
	@Idempotent(key = "#key", workflow = "unwritable")
	public Unwritable unwritable(String key) {
		write(key);
		return new Unwritable();
	}

	@Transactional
	@Idempotent(key = "#key", workflow = "declines", recordFailureFor = CardDeclinedException.class)
	public String declines(String key) {
		write(key);
		throw new CardDeclinedException("declined: 51");
	}

	@Transactional
	@Idempotent(key = "#key", workflow = "pending")
	public String pending(String key) throws PaymentPendingException {
		write(key);
		throw new PaymentPendingException();
	}

	@Transactional(noRollbackFor = IllegalStateException.class)
	@Idempotent(key = "#key", workflow = "no-rollback-for")
	public String noRollbackFor(String key) {
		write(key);
		throw new IllegalStateException("the writes stay");
	}

	@Transactional(propagation = Propagation.SUPPORTS)
	@Idempotent(key = "#key", workflow = "supports")
	public void supports(String key, Runnable during) {
		write(key);
		during.run();
	}

	@Transactional(propagation = Propagation.NOT_SUPPORTED)
	@Idempotent(key = "#key", workflow = "not-supported")
	public void notSupported(String key, Runnable during) {
		write(key);
		during.run();
	}

	@Idempotent(key = "#key", workflow = "plain")
	public void plain(String key, Runnable during) {
		write(key);
		during.run();
	}

	@Transactional(propagation = Propagation.MANDATORY)
	@Idempotent(key = "#key", workflow = "mandatory")
	public String mandatory(String key) {
		return write(key);
	}

	@Transactional(propagation = Propagation.NESTED)
	@Idempotent(key = "#key", workflow = "nested")
	public String nested(String key, boolean fail) {
		String result = write(key);
		if (fail) {
			throw new IllegalStateException("rolled back to the savepoint");
		}
		return result;
	}

	@Transactional(propagation = Propagation.NESTED)
	@Idempotent(key = "#key", workflow = "nested-declines", recordFailureFor = CardDeclinedException.class)
	public String nestedDeclines(String key) {
		write(key);
		throw new CardDeclinedException("declined: 05");
	}

	@Transactional(readOnly = true)
	@Idempotent(key = "#key", workflow = "read-only")
	public String readOnly(String key) {
		return read(key);
	}

	@Transactional(readOnly = true, propagation = Propagation.SUPPORTS)
	@Idempotent(key = "#key", workflow = "read-only-supports")
	public String readOnlySupports(String key) {
		return read(key);
	}

	/** How often a read-only method ran for the key (it cannot count in the database). */
	public int reads(String key) {
		return this.reads.getOrDefault(key, 0);
	}

	public long effects(String key) {
		return this.jdbc.sql("SELECT COUNT(*) FROM tx_boundary_effect WHERE effect_key = :key")
			.param("key", key)
			.query(Long.class)
			.single();
	}

	public long effectsLike(String prefix) {
		return this.jdbc.sql("SELECT COUNT(*) FROM tx_boundary_effect WHERE effect_key LIKE :prefix")
			.param("prefix", prefix + "%")
			.query(Long.class)
			.single();
	}

	private String read(String key) {
		this.reads.merge(key, 1, Integer::sum);
		return key + ":" + effects(key) + ":" + UUID.randomUUID();
	}

	private String write(String key) {
		this.jdbc.sql("INSERT INTO tx_boundary_effect (effect_key) VALUES (:key)").param("key", key).update();
		return key + ":" + UUID.randomUUID();
	}

	/** A permanent failure: stored and replayed. */
	public static class CardDeclinedException extends RuntimeException {

		public CardDeclinedException(String message) {
			super(message);
		}

	}

	/** A checked exception: by default the transaction commits on it. */
	public static class PaymentPendingException extends Exception {

		public PaymentPendingException() {
			super("the bank has not answered yet");
		}

	}

	/** A result Jackson can describe but not write: its getter throws. */
	public static class Unwritable {

		public String getValue() {
			throw new IllegalStateException("cannot be written");
		}

		public void setValue(String value) {
		}

	}

}
