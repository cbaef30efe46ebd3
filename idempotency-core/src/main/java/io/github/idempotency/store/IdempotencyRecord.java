package io.github.idempotency.store;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * One record of the store, as read.
 *
 * @param id workflow and key
 * @param status the state
 * @param fingerprint SHA-256 of the payload of the first call, or {@code null}
 * @param owner the fencing token of the run that holds or held the claim
 * @param attempt 1 for the first run, incremented by each takeover
 * @param leaseUntil when the lease of an {@code IN_PROGRESS} record runs out
 * @param recoveryPoint the last recovery point saved, or {@code null}
 * @param response the serialized result of a {@code COMPLETED} record, {@code null} for
 * {@code void}
 * @param errorType the exception class name of a {@code FAILED} record
 * @param errorMessage the exception message of a {@code FAILED} record
 * @param createdAt when the record was first claimed
 * @param updatedAt when the record last changed
 * @param expiresAt when the record may be deleted; afterwards it counts as absent
 */
public record IdempotencyRecord(RecordId id, RecordStatus status, @Nullable String fingerprint, String owner,
		int attempt, Instant leaseUntil, @Nullable String recoveryPoint, @Nullable String response,
		@Nullable String errorType, @Nullable String errorMessage, Instant createdAt, Instant updatedAt,
		Instant expiresAt) {

	/**
	 * The longest error message a record keeps, in characters: what every store's column
	 * takes (MariaDB's {@code TEXT} holds 65,535 bytes, four to a character at most).
	 */
	public static final int MAX_ERROR_MESSAGE_LENGTH = 4000;

	/**
	 * The error type a store records for {@code failure}: its class name.
	 * @param failure what the operation threw
	 * @return the error type
	 */
	public static String errorTypeOf(Throwable failure) {
		return failure.getClass().getName();
	}

	/**
	 * The error message a store records for {@code failure}, fit for every store: a NUL
	 * character and an unpaired surrogate (which PostgreSQL and UTF-8 cannot hold) are
	 * written as the escape a Java literal would use (a backslash, {@code u} and four hex
	 * digits), and a message longer than
	 * {@link #MAX_ERROR_MESSAGE_LENGTH} is cut there (never inside a surrogate pair) and
	 * ends with an ellipsis.
	 * @param failure what the operation threw
	 * @return the message, {@code null} when it has none
	 */
	public static @Nullable String errorMessageOf(Throwable failure) {
		String message = failure.getMessage();
		if (message == null || (message.length() <= MAX_ERROR_MESSAGE_LENGTH && !needsEscapes(message))) {
			return message;
		}
		StringBuilder fit = new StringBuilder(MAX_ERROR_MESSAGE_LENGTH);
		for (int i = 0; i < message.length(); i++) {
			char c = message.charAt(i);
			boolean paired = isPaired(message, i);
			String piece = (c == 0 || (Character.isSurrogate(c) && !paired)) ? String.format("\\u%04X", (int) c)
					: message.substring(i, paired ? i + 2 : i + 1);
			boolean last = i + (paired ? 2 : 1) == message.length();
			if (fit.length() + piece.length() > MAX_ERROR_MESSAGE_LENGTH - (last ? 0 : 1)) {
				return fit.append('\u2026').toString();
			}
			fit.append(piece);
			i += paired ? 1 : 0;
		}
		return fit.toString();
	}

	private static boolean needsEscapes(String message) {
		for (int i = 0; i < message.length(); i++) {
			char c = message.charAt(i);
			if (c == 0 || (Character.isSurrogate(c) && !isPaired(message, i) && !isPaired(message, i - 1))) {
				return true;
			}
		}
		return false;
	}

	private static boolean isPaired(String text, int i) {
		return i >= 0 && i + 1 < text.length() && Character.isHighSurrogate(text.charAt(i))
				&& Character.isLowSurrogate(text.charAt(i + 1));
	}

	/**
	 * Whether the record counts as absent at {@code now}.
	 * @param now the current time
	 * @return {@code true} once {@code expiresAt} has passed
	 */
	public boolean isExpired(Instant now) {
		return !now.isBefore(this.expiresAt);
	}

	/**
	 * Whether an {@code IN_PROGRESS} record's lease ran out at {@code now}.
	 * @param now the current time
	 * @return {@code true} once {@code leaseUntil} has passed
	 */
	public boolean isLeaseExpired(Instant now) {
		return !now.isBefore(this.leaseUntil);
	}

}
