package io.github.idempotency.web;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.internal.http.HttpFingerprint;

/**
 * Reads what a servlet request's fingerprint covers ({@link HttpFingerprint}): its
 * method, its path, its query parameters and form parameters, and the SHA-256 of its body
 * as received. The body is read through as the handler method reads it
 * ({@link IdempotentRequestBodyAdvice}), and the rest of it after the method's
 * arguments are resolved; a body nobody read is read here.
 */
final class RequestFingerprint {

	private static final String BODY = RequestFingerprint.class.getName() + ".body";

	private RequestFingerprint() {
	}

	/**
	 * The payload to fingerprint of a request.
	 * @param request the request, whose handler method's arguments are resolved
	 * @return method, path, query parameters, form parameters and the body's digest
	 */
	static List<@Nullable Object> of(HttpServletRequest request) {
		Map<String, List<String>> form = HttpFingerprint.isForm(request.getContentType())
				? form(request, HttpFingerprint.parameters(request.getQueryString())) : Map.of();
		return HttpFingerprint.of(request.getMethod(), request.getRequestURI(), request.getQueryString(), form,
				body(request));
	}

	/**
	 * Reads a body through, digesting what the reader reads.
	 * @param request the request
	 * @param body the body as received
	 * @return the body to read instead; closing it leaves the body open for the rest to be
	 * digested
	 */
	static InputStream readThrough(HttpServletRequest request, InputStream body) {
		DigestInputStream digest = new DigestInputStream(body, HttpFingerprint.sha256());
		request.setAttribute(BODY, digest);
		return new FilterInputStream(digest) {

			@Override
			public void close() {
				// the rest is read when the request is fingerprinted
			}

		};
	}

	private static @Nullable String body(HttpServletRequest request) {
		InputStream body;
		MessageDigest digest;
		if (request.getAttribute(BODY) instanceof DigestInputStream read) {
			body = read;
			digest = read.getMessageDigest();
		}
		else {
			try {
				digest = HttpFingerprint.sha256();
				body = new DigestInputStream(request.getInputStream(), digest);
			}
			catch (IllegalStateException | IOException ex) {
				// read through getReader() by the method itself
				return null;
			}
		}
		try {
			body.transferTo(OutputStream.nullOutputStream());
		}
		catch (IOException ex) {
			// what was read is what the request carried
		}
		return HttpFingerprint.hex(digest);
	}

	/** The form parameters: the request's parameters after those of its query string. */
	private static Map<String, List<String>> form(HttpServletRequest request, Map<String, List<String>> query) {
		Map<String, List<String>> form = new TreeMap<>();
		request.getParameterMap().forEach((name, values) -> {
			List<String> inQuery = query.getOrDefault(name, List.of());
			if (values.length > inQuery.size()) {
				form.put(name, List.of(values).subList(inQuery.size(), values.length));
			}
		});
		return form;
	}

}
