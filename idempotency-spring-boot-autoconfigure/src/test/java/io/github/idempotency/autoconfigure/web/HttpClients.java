package io.github.idempotency.autoconfigure.web;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.List;

/**
 * A real HTTP client for the tests: posts JSON and keeps the answer's bytes.
 */
final class HttpClients {

	private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private final int port;

	HttpClients(int port) {
		this.port = port;
	}

	HttpRequest request(String path, String json, String... headers) {
		HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
			// a server that never answers fails the test instead of hanging it
			.timeout(java.time.Duration.ofSeconds(60))
			.header("Content-Type", "application/json")
			.header("Accept", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json));
		if (headers.length > 0) {
			builder.headers(headers);
		}
		return builder.build();
	}

	HttpResponse<byte[]> post(String path, String json, String... headers) {
		return send(request(path, json, headers));
	}

	HttpResponse<byte[]> postForm(String path, String form, String... headers) {
		HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
			.timeout(java.time.Duration.ofSeconds(60))
			.header("Content-Type", "application/x-www-form-urlencoded")
			.header("Accept", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(form));
		if (headers.length > 0) {
			builder.headers(headers);
		}
		return send(builder.build());
	}

	/**
	 * Sends a request on a connection of its own, and leaves it open without reading the
	 * answer: the test closes it, as a client that goes away.
	 */
	java.net.Socket open(String path, String json, String... headers) {
		try {
			java.net.Socket socket = new java.net.Socket("localhost", this.port);
			byte[] body = json.getBytes(java.nio.charset.StandardCharsets.UTF_8);
			StringBuilder request = new StringBuilder("POST " + path + " HTTP/1.1\r\nHost: localhost\r\n"
					+ "Content-Type: application/json\r\nContent-Length: " + body.length + "\r\n");
			for (int i = 0; i + 1 < headers.length; i += 2) {
				request.append(headers[i]).append(": ").append(headers[i + 1]).append("\r\n");
			}
			socket.getOutputStream().write(request.append("\r\n").toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
			socket.getOutputStream().write(body);
			socket.getOutputStream().flush();
			return socket;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** The {@code Authorization} header of basic auth, as a name and a value. */
	static String[] basic(String user, String password) {
		return new String[] { "Authorization", "Basic " + java.util.Base64.getEncoder()
			.encodeToString((user + ":" + password).getBytes(java.nio.charset.StandardCharsets.UTF_8)) };
	}

	HttpResponse<byte[]> send(HttpRequest request) {
		try {
			return this.client.send(request, HttpResponse.BodyHandlers.ofByteArray());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	java.util.concurrent.CompletableFuture<HttpResponse<byte[]>> sendAsync(HttpRequest request) {
		return this.client.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray());
	}

	/**
	 * The headers of a response, names in lower case, without those that differ between
	 * two answers of the same content (the date) and those given.
	 */
	static Map<String, List<String>> headers(HttpResponse<?> response, String... without) {
		Map<String, List<String>> headers = new TreeMap<>();
		response.headers().map().forEach((name, values) -> headers.put(name.toLowerCase(Locale.ROOT), values));
		headers.remove("date");
		for (String name : without) {
			headers.remove(name.toLowerCase(Locale.ROOT));
		}
		return headers;
	}

}
