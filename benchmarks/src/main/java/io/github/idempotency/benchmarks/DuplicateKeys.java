package io.github.idempotency.benchmarks;

import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * Keys whose first delivery finished before the measurement: every call on them is a
 * duplicate. Each benchmark thread walks the set from its own random start.
 */
@State(Scope.Thread)
public class DuplicateKeys {

	/** How many finished keys a duplicate benchmark prepares. */
	public static final int COUNT = 256;

	private static final String[] KEYS = create();

	private int next = ThreadLocalRandom.current().nextInt(COUNT);

	/**
	 * A key that was already delivered and finished.
	 * @return the key
	 */
	public String next() {
		String key = KEYS[this.next];
		this.next = (this.next + 1) % COUNT;
		return key;
	}

	/**
	 * All the keys, for the set-up that finishes them.
	 * @return the keys
	 */
	public static String[] all() {
		return KEYS.clone();
	}

	private static String[] create() {
		String run = UUID.randomUUID().toString().substring(0, 13);
		String[] keys = new String[COUNT];
		for (int i = 0; i < COUNT; i++) {
			keys[i] = "dup-" + run + "-" + i;
		}
		return keys;
	}

}
