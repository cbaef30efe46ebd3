package io.github.idempotency.internal.http;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * What the client of an {@code @Idempotent} handler method received, as it is stored and
 * replayed on either HTTP stack: the status, the allow-listed headers and the body's bytes,
 * whoever wrote them (a return value, a {@code ResponseEntity}, the handler writing the
 * response itself, an exception handler, the error handling). A Spring MVC answer that
 * left its body to the error page ({@code sendError}) is stored as that, and replayed as
 * the same {@code sendError}.
 *
 * @param status the status
 * @param headers the allow-listed headers, {@code Content-Type} among them when it is on
 * the list
 * @param body the body's bytes, empty when there was none
 * @param sentError whether the answer was a {@code sendError}, whose body the error page
 * writes
 * @param reason the message of the {@code sendError}, or {@code null}
 */
public record HttpAnswer(int status, Map<String, List<String>> headers, byte[] body, boolean sentError,
		@Nullable String reason) {

	/**
	 * The answer to store of what was written.
	 * @param status the status written
	 * @param written the headers written (any case)
	 * @param storedHeaders the allow-listed headers
	 * @param body the body written
	 * @return the answer, with only the allow-listed headers (never cookies or
	 * authentication headers)
	 */
	public static HttpAnswer of(int status, Map<String, ? extends Collection<String>> written,
			List<String> storedHeaders, byte[] body) {
		return new HttpAnswer(status, allowed(written, storedHeaders), body, false, null);
	}

	/**
	 * A {@code sendError} to store: its status, the allow-listed headers and its message.
	 * @param status the status
	 * @param written the headers written (any case)
	 * @param storedHeaders the allow-listed headers
	 * @param reason the message, or {@code null}
	 * @return the answer
	 */
	public static HttpAnswer sentError(int status, Map<String, ? extends Collection<String>> written,
			List<String> storedHeaders, @Nullable String reason) {
		return new HttpAnswer(status, allowed(written, storedHeaders), new byte[0], true, reason);
	}

	private static Map<String, List<String>> allowed(Map<String, ? extends Collection<String>> written,
			List<String> storedHeaders) {
		Map<String, List<String>> headers = new LinkedHashMap<>();
		for (String name : StoredHeaders.allowed(storedHeaders)) {
			written.forEach((header, values) -> {
				if (header.equalsIgnoreCase(name) && !values.isEmpty()) {
					headers.put(name, List.copyOf(values));
				}
			});
		}
		return headers;
	}

}
