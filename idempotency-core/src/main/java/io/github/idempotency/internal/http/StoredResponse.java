package io.github.idempotency.internal.http;

import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * What is stored of a handler method's response and replayed to a duplicate request: its
 * status, its allow-listed headers and its body, on either HTTP stack.
 *
 * @param <T> the body type
 * @param status the HTTP status code
 * @param headers the stored headers (only those on the allow-list)
 * @param body the body, or {@code null}
 */
public record StoredResponse<T>(int status, Map<String, List<String>> headers, @Nullable T body) {

}
