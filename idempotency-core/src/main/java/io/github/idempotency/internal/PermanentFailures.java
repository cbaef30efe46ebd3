package io.github.idempotency.internal;

import java.util.List;

/**
 * An operation's permanent failures, its {@code recordFailureFor} types: the one test of
 * whether a failure is recorded (stored as failed, and replayed to every later call of its
 * key) or releases the key, asked by the engine when a run ends and by the HTTP adapters,
 * which write a permanent failure's answer before the engine stores it.
 */
public final class PermanentFailures {

	private static final PermanentFailures NONE = new PermanentFailures(List.of());

	private final List<Class<? extends Throwable>> types;

	private PermanentFailures(List<Class<? extends Throwable>> types) {
		this.types = types;
	}

	/**
	 * The permanent failures of an operation.
	 * @param types the {@code recordFailureFor} types
	 * @return a failure of any of these types, or of a subtype, is permanent
	 */
	public static PermanentFailures of(List<Class<? extends Throwable>> types) {
		return types.isEmpty() ? NONE : new PermanentFailures(List.copyOf(types));
	}

	/**
	 * Whether a failure is permanent.
	 * @param failure what the operation threw
	 * @return whether it is an instance of one of the types
	 */
	public boolean includes(Throwable failure) {
		for (Class<? extends Throwable> type : this.types) {
			if (type.isInstance(failure)) {
				return true;
			}
		}
		return false;
	}

}
