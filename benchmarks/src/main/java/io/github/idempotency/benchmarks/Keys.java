package io.github.idempotency.benchmarks;

import java.util.UUID;
import java.util.stream.LongStream;

import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * Fresh keys for first deliveries, one sequence per benchmark thread: a random run prefix
 * and a counter, so no two calls in any run share a key.
 */
@State(Scope.Thread)
public class Keys {

	private final String prefix = UUID.randomUUID().toString().substring(0, 13) + "-";

	private long next;

	private long first;

	/**
	 * A key never used before.
	 * @return the key
	 */
	public String next() {
		return this.prefix + this.next++;
	}

	/**
	 * Forgets the keys handed out so far, for {@link #issued()}.
	 */
	void mark() {
		this.first = this.next;
	}

	/**
	 * The keys handed out since the last {@link #mark()}.
	 * @return the keys, in order
	 */
	Iterable<String> issued() {
		long from = this.first;
		long to = this.next;
		return () -> LongStream.range(from, to).mapToObj((n) -> this.prefix + n).iterator();
	}

}
