package io.github.idempotency.benchmarks;

import java.util.UUID;

import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * Fresh keys for first deliveries, one sequence per benchmark thread: a random run prefix
 * and a counter, so no two calls in any run share a key.
 */
@State(Scope.Thread)
public class Keys {

	/** How many of its latest keys a thread keeps in an in-memory store. */
	static final int WINDOW = 4096;

	private final String prefix = UUID.randomUUID().toString().substring(0, 13) + "-";

	private long next;

	/**
	 * A key never used before.
	 * @return the key
	 */
	public String next() {
		return this.prefix + this.next++;
	}

	/**
	 * The key handed out {@link #WINDOW} keys ago, which an in-memory benchmark drops so
	 * that its live set, and so the garbage collector's work, stays the same size however
	 * long it runs.
	 * @return the key, or {@code null} at the start
	 */
	String retired() {
		long retired = this.next - 1 - WINDOW;
		return (retired >= 0) ? this.prefix + retired : null;
	}

}
