package io.github.idempotency.internal.http;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;

import org.springframework.http.MediaType;

/**
 * What a request's fingerprint covers, on both HTTP stacks: its method, its path, its
 * query parameters and form parameters (names sorted, the values of a name in the order
 * sent), and the SHA-256 of its body as received (the bytes, not a canonical form of
 * them). Each stack reads these from its own request; the payload the engine fingerprints
 * is built here.
 */
public final class HttpFingerprint {

	private HttpFingerprint() {
	}

	/**
	 * The payload to fingerprint.
	 * @param method the request's method
	 * @param path the request's path, as received (not decoded)
	 * @param rawQuery the query string, as received, or {@code null}
	 * @param form the form parameters ({@link #parameters}), empty for a request that is
	 * not a form
	 * @param bodyDigest the body's digest ({@link #hex}), or {@code null} when it was not
	 * read as bytes
	 * @return what the engine fingerprints
	 */
	public static List<@Nullable Object> of(String method, String path, @Nullable String rawQuery,
			Map<String, List<String>> form, @Nullable String bodyDigest) {
		return Arrays.asList(method, path, parameters(rawQuery), form, bodyDigest);
	}

	/**
	 * Parameters of a query string or a form body, decoded, names sorted, the values of a
	 * name in the order sent.
	 * @param encoded {@code a=1&b=2}, or {@code null}
	 * @return the parameters
	 */
	public static Map<String, List<String>> parameters(@Nullable String encoded) {
		Map<String, List<String>> parameters = new TreeMap<>();
		if (encoded == null || encoded.isEmpty()) {
			return parameters;
		}
		for (String pair : encoded.split("&")) {
			if (pair.isEmpty()) {
				continue;
			}
			int equals = pair.indexOf('=');
			String name = decode((equals >= 0) ? pair.substring(0, equals) : pair);
			String value = (equals >= 0) ? decode(pair.substring(equals + 1)) : "";
			parameters.computeIfAbsent(name, (key) -> new ArrayList<>()).add(value);
		}
		return parameters;
	}

	/**
	 * Whether a content type is a form's ({@code application/x-www-form-urlencoded}).
	 * @param contentType the request's content type, or {@code null}
	 * @return whether its body is a form
	 */
	public static boolean isForm(@Nullable String contentType) {
		try {
			return contentType != null
					&& MediaType.APPLICATION_FORM_URLENCODED.includes(MediaType.parseMediaType(contentType));
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

	/**
	 * A new digest of a body.
	 * @return a SHA-256 digest
	 */
	public static MessageDigest sha256() {
		try {
			return MessageDigest.getInstance("SHA-256");
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is not available", ex);
		}
	}

	/**
	 * A body's digest as fingerprinted.
	 * @param digest the digest of the bytes read
	 * @return its hexadecimal form
	 */
	public static String hex(MessageDigest digest) {
		return HexFormat.of().formatHex(digest.digest());
	}

	private static String decode(String text) {
		try {
			return URLDecoder.decode(text, StandardCharsets.UTF_8);
		}
		catch (IllegalArgumentException ex) {
			return text;
		}
	}

}
