package io.github.idempotency.internal.http;

import java.util.List;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.internal.RejectedKey;


/**
 * Reads the key from the {@code Idempotency-Key} field as the IETF draft defines it: an
 * RFC 8941 structured-field Item whose value is a String ({@code "abc"}, with {@code \"}
 * and {@code \\} as the only escapes), with optional parameters that are parsed and
 * ignored. For the clients that send the key unquoted, a bare token is accepted as well:
 * one or more of the characters of an RFC 8941 token ({@code tchar}, {@code :} and
 * {@code /}), whatever the first one is (a UUID starts with a digit). {@code "abc"} and
 * {@code abc} are the same key. Several field lines are combined with commas, as RFC 8941
 * says, and so are malformed. Both HTTP stacks (Spring MVC and WebFlux) read the key here.
 */
public final class IdempotencyKeyHeader {

	private final String text;

	private int position;

	private IdempotencyKeyHeader(String text) {
		this.text = text;
	}

	/**
	 * The key a field's lines carry.
	 * @param name the header's name, for the message of a malformed value
	 * @param lines the field's lines, in order
	 * @return the key ({@code ""} for {@code ""} or an empty field), {@code null} when the
	 * request has no such field, or a {@link RejectedKey} when the value is neither a
	 * structured-field string nor a bare token (the engine rejects it, counted as an
	 * invalid key)
	 */
	public static @Nullable Object parse(String name, @Nullable List<String> lines) {
		if (lines == null || lines.isEmpty()) {
			return null;
		}
		String key = new IdempotencyKeyHeader(strip(String.join(",", lines))).key();
		if (key == null) {
			return new RejectedKey("is malformed: the " + name
					+ " header is neither a structured-field string (\"...\", RFC 8941) nor a bare token");
		}
		return key;
	}

	/** The key of a value without its surrounding spaces, {@code null} when malformed. */
	private @Nullable String key() {
		if (this.text.isEmpty()) {
			return "";
		}
		if (this.text.charAt(0) != '"') {
			for (int i = 0; i < this.text.length(); i++) {
				if (!isTokenChar(this.text.charAt(i))) {
					return null;
				}
			}
			return this.text;
		}
		String key = string();
		return (key != null && parameters() && this.position == this.text.length()) ? key : null;
	}

	/** RFC 8941 4.2.5: a String, at {@code position}. */
	private @Nullable String string() {
		if (!consume('"')) {
			return null;
		}
		StringBuilder out = new StringBuilder();
		while (this.position < this.text.length()) {
			char c = this.text.charAt(this.position++);
			if (c == '\\') {
				if (this.position == this.text.length()) {
					return null;
				}
				char escaped = this.text.charAt(this.position++);
				if (escaped != '"' && escaped != '\\') {
					return null;
				}
				out.append(escaped);
			}
			else if (c == '"') {
				return out.toString();
			}
			else if (c < 0x20 || c > 0x7E) {
				return null;
			}
			else {
				out.append(c);
			}
		}
		return null;
	}

	/** RFC 8941 4.2.3.2: parameters, each {@code ;key[=bare-item]}. */
	private boolean parameters() {
		while (consume(';')) {
			while (consume(' ')) {
				// spaces before the key
			}
			if (this.position == this.text.length() || !isKeyStart(this.text.charAt(this.position))) {
				return false;
			}
			this.position++;
			while (this.position < this.text.length() && isKeyChar(this.text.charAt(this.position))) {
				this.position++;
			}
			if (consume('=') && !bareItem()) {
				return false;
			}
		}
		return true;
	}

	/** RFC 8941 4.2.3.1: an Integer, Decimal, String, Token, Byte Sequence or Boolean. */
	private boolean bareItem() {
		if (this.position == this.text.length()) {
			return false;
		}
		char c = this.text.charAt(this.position);
		if (c == '"') {
			return string() != null;
		}
		if (c == '?') {
			this.position++;
			return consume('0') || consume('1');
		}
		if (c == ':') {
			this.position++;
			while (this.position < this.text.length() && isBase64(this.text.charAt(this.position))) {
				this.position++;
			}
			return consume(':');
		}
		if (c == '-' || isDigit(c)) {
			consume('-');
			int digits = digits();
			if (digits == 0 || digits > 15) {
				return false;
			}
			if (consume('.')) {
				int fraction = digits();
				return digits <= 12 && fraction >= 1 && fraction <= 3;
			}
			return true;
		}
		if (isAlpha(c) || c == '*') {
			this.position++;
			while (this.position < this.text.length() && isTokenChar(this.text.charAt(this.position))) {
				this.position++;
			}
			return true;
		}
		return false;
	}

	private int digits() {
		int start = this.position;
		while (this.position < this.text.length() && isDigit(this.text.charAt(this.position))) {
			this.position++;
		}
		return this.position - start;
	}

	private boolean consume(char c) {
		if (this.position < this.text.length() && this.text.charAt(this.position) == c) {
			this.position++;
			return true;
		}
		return false;
	}

	/** RFC 8941 4.2: leading and trailing spaces are discarded (and tabs, which HTTP allows). */
	private static String strip(String value) {
		int start = 0;
		int end = value.length();
		while (start < end && isWhitespace(value.charAt(start))) {
			start++;
		}
		while (end > start && isWhitespace(value.charAt(end - 1))) {
			end--;
		}
		return value.substring(start, end);
	}

	private static boolean isWhitespace(char c) {
		return c == ' ' || c == '\t';
	}

	private static boolean isDigit(char c) {
		return c >= '0' && c <= '9';
	}

	private static boolean isAlpha(char c) {
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
	}

	private static boolean isKeyStart(char c) {
		return (c >= 'a' && c <= 'z') || c == '*';
	}

	private static boolean isKeyChar(char c) {
		return isKeyStart(c) || isDigit(c) || c == '_' || c == '-' || c == '.';
	}

	private static boolean isBase64(char c) {
		return isAlpha(c) || isDigit(c) || c == '+' || c == '/' || c == '=';
	}

	/** RFC 9110 {@code tchar}, and the {@code :} and {@code /} an RFC 8941 token adds. */
	private static boolean isTokenChar(char c) {
		return isAlpha(c) || isDigit(c) || "!#$%&'*+-.^_`|~:/".indexOf(c) >= 0;
	}

}
