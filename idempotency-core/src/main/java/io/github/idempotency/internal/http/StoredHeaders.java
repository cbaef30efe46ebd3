package io.github.idempotency.internal.http;

import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Which response headers are stored and replayed: those on the allow-list
 * ({@code idempotency.web.stored-headers}), never the cookies and the authentication
 * headers, whatever the list says.
 */
public final class StoredHeaders {

	/** Headers never stored, whatever the allow-list says. */
	private static final Set<String> NEVER_STORED = Set.of("set-cookie", "set-cookie2", "authorization",
			"proxy-authorization", "www-authenticate", "proxy-authenticate", "cookie");

	private StoredHeaders() {
	}

	/**
	 * The headers of an allow-list that may be stored.
	 * @param allowList the configured allow-list
	 * @return the list without the headers that are never stored
	 */
	public static List<String> allowed(Collection<String> allowList) {
		return allowList.stream().filter((name) -> !NEVER_STORED.contains(name.toLowerCase(Locale.ROOT))).toList();
	}

}
