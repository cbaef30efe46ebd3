package io.github.idempotency.web;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import org.jspecify.annotations.Nullable;

import io.github.idempotency.internal.http.RecordedHttpFailure;
import org.springframework.http.HttpHeaders;
import org.springframework.util.LinkedCaseInsensitiveMap;

/**
 * A response the application's exception handling writes to instead of the real one, so
 * that what it answers to a permanent failure can be stored and then written once: the
 * status, the headers, the body, or the {@code sendError} that leaves the body to the
 * error page. Nothing reaches the wrapped response but cookies.
 */
final class CapturedResponse extends HttpServletResponseWrapper {

	private final Map<String, List<String>> headers = new LinkedCaseInsensitiveMap<>(Locale.ROOT);

	private final ByteArrayOutputStream body = new ByteArrayOutputStream();

	private int status = SC_OK;

	private boolean sentError;

	private @Nullable String errorMessage;

	private @Nullable String contentType;

	private @Nullable String characterEncoding;

	private @Nullable ServletOutputStream outputStream;

	private @Nullable PrintWriter writer;

	CapturedResponse(HttpServletResponse response) {
		super(response);
	}

	int status() {
		return this.status;
	}

	boolean sentError() {
		return this.sentError;
	}

	@Nullable String errorMessage() {
		return this.errorMessage;
	}

	/** The headers as written, {@code Content-Type} among them. */
	Map<String, List<String>> headers() {
		Map<String, List<String>> all = new LinkedHashMap<>(this.headers);
		String type = getContentType();
		if (type != null) {
			all.put(HttpHeaders.CONTENT_TYPE, List.of(type));
		}
		return all;
	}

	byte[] body() {
		if (this.writer != null) {
			this.writer.flush();
		}
		return this.body.toByteArray();
	}

	Charset charset() {
		String encoding = getCharacterEncoding();
		try {
			return (encoding != null) ? Charset.forName(encoding) : StandardCharsets.ISO_8859_1;
		}
		catch (RuntimeException ex) {
			return StandardCharsets.ISO_8859_1;
		}
	}

	/**
	 * The answer to store of what was captured.
	 * @param storedHeaders the allow-listed headers
	 * @return the answer, or {@code null} when its body is not text in its charset
	 */
	RecordedHttpFailure.@Nullable Answer toAnswer(List<String> storedHeaders) {
		return RecordedHttpFailure.Answer.of(status(), headers(), storedHeaders, sentError(), errorMessage(), body(),
				charset());
	}

	/**
	 * Writes what was captured to the real response, as the exception handling wrote it.
	 * @param response the real response
	 * @throws IOException when the response cannot be written
	 */
	void writeTo(HttpServletResponse response) throws IOException {
		this.headers.forEach((name, values) -> values.forEach((value) -> response.addHeader(name, value)));
		if (this.contentType != null) {
			response.setContentType(this.contentType);
		}
		if (this.characterEncoding != null) {
			response.setCharacterEncoding(this.characterEncoding);
		}
		if (this.sentError) {
			if (this.errorMessage != null) {
				response.sendError(this.status, this.errorMessage);
			}
			else {
				response.sendError(this.status);
			}
			return;
		}
		response.setStatus(this.status);
		byte[] bytes = body();
		if (bytes.length > 0) {
			response.getOutputStream().write(bytes);
		}
	}

	@Override
	public void setStatus(int status) {
		if (!this.sentError) {
			this.status = status;
		}
	}

	@Override
	public int getStatus() {
		return this.status;
	}

	@Override
	public void sendError(int status) {
		sendError(status, null);
	}

	@Override
	public void sendError(int status, @Nullable String message) {
		this.status = status;
		this.sentError = true;
		this.errorMessage = message;
	}

	@Override
	public void sendRedirect(String location, int status, boolean clearBuffer) {
		this.status = status;
		setHeader(HttpHeaders.LOCATION, location);
	}

	@Override
	public boolean containsHeader(String name) {
		return this.headers.containsKey(name)
				|| (HttpHeaders.CONTENT_TYPE.equalsIgnoreCase(name) && this.contentType != null);
	}

	@Override
	public void setHeader(String name, @Nullable String value) {
		if (HttpHeaders.CONTENT_TYPE.equalsIgnoreCase(name)) {
			setContentType(value);
		}
		else if (value == null) {
			this.headers.remove(name);
		}
		else {
			this.headers.put(name, new ArrayList<>(List.of(value)));
		}
	}

	@Override
	public void addHeader(String name, @Nullable String value) {
		if (HttpHeaders.CONTENT_TYPE.equalsIgnoreCase(name)) {
			setContentType(value);
		}
		else if (value != null) {
			this.headers.computeIfAbsent(name, (key) -> new ArrayList<>()).add(value);
		}
	}

	@Override
	public void setIntHeader(String name, int value) {
		setHeader(name, Integer.toString(value));
	}

	@Override
	public void addIntHeader(String name, int value) {
		addHeader(name, Integer.toString(value));
	}

	@Override
	public void setDateHeader(String name, long date) {
		HttpHeaders formatted = new HttpHeaders();
		formatted.setDate(name, date);
		setHeader(name, formatted.getFirst(name));
	}

	@Override
	public void addDateHeader(String name, long date) {
		HttpHeaders formatted = new HttpHeaders();
		formatted.setDate(name, date);
		addHeader(name, formatted.getFirst(name));
	}

	@Override
	public @Nullable String getHeader(String name) {
		if (HttpHeaders.CONTENT_TYPE.equalsIgnoreCase(name)) {
			return getContentType();
		}
		List<String> values = this.headers.get(name);
		return (values != null && !values.isEmpty()) ? values.get(0) : null;
	}

	@Override
	public Collection<String> getHeaders(String name) {
		if (HttpHeaders.CONTENT_TYPE.equalsIgnoreCase(name)) {
			String type = getContentType();
			return (type != null) ? List.of(type) : List.of();
		}
		List<String> values = this.headers.get(name);
		return (values != null) ? List.copyOf(values) : List.of();
	}

	@Override
	public Collection<String> getHeaderNames() {
		List<String> names = new ArrayList<>(this.headers.keySet());
		if (this.contentType != null) {
			names.add(HttpHeaders.CONTENT_TYPE);
		}
		return names;
	}

	@Override
	public void setContentType(@Nullable String type) {
		this.contentType = type;
		if (type != null) {
			int charset = type.toLowerCase(Locale.ROOT).indexOf("charset=");
			if (charset >= 0) {
				String encoding = type.substring(charset + "charset=".length()).trim();
				int end = encoding.indexOf(';');
				this.characterEncoding = ((end >= 0) ? encoding.substring(0, end) : encoding).replace("\"", "");
			}
		}
	}

	@Override
	public @Nullable String getContentType() {
		if (this.contentType == null) {
			return null;
		}
		if (this.characterEncoding != null && !this.contentType.toLowerCase(Locale.ROOT).contains("charset=")) {
			return this.contentType + ";charset=" + this.characterEncoding;
		}
		return this.contentType;
	}

	@Override
	public void setCharacterEncoding(@Nullable String encoding) {
		this.characterEncoding = encoding;
	}

	@Override
	public @Nullable String getCharacterEncoding() {
		return (this.characterEncoding != null) ? this.characterEncoding : super.getCharacterEncoding();
	}

	@Override
	public void setContentLength(int length) {
		// the body is written whole: the container sets its length
	}

	@Override
	public void setContentLengthLong(long length) {
		// the body is written whole: the container sets its length
	}

	@Override
	public ServletOutputStream getOutputStream() {
		if (this.outputStream == null) {
			this.outputStream = new ServletOutputStream() {

				@Override
				public void write(int b) {
					CapturedResponse.this.body.write(b);
				}

				@Override
				public void write(byte[] bytes, int offset, int length) {
					CapturedResponse.this.body.write(bytes, offset, length);
				}

				@Override
				public boolean isReady() {
					return true;
				}

				@Override
				public void setWriteListener(WriteListener listener) {
					throw new UnsupportedOperationException();
				}

			};
		}
		return this.outputStream;
	}

	@Override
	public PrintWriter getWriter() {
		if (this.writer == null) {
			this.writer = new PrintWriter(new OutputStreamWriter(this.body, charset()));
		}
		return this.writer;
	}

	@Override
	public void flushBuffer() {
		if (this.writer != null) {
			this.writer.flush();
		}
	}

	@Override
	public void resetBuffer() {
		flushBuffer();
		this.body.reset();
	}

	@Override
	public void reset() {
		resetBuffer();
		this.headers.clear();
		this.contentType = null;
		this.characterEncoding = null;
		this.status = SC_OK;
		this.sentError = false;
		this.errorMessage = null;
	}

	@Override
	public boolean isCommitted() {
		return false;
	}

	@Override
	public void setBufferSize(int size) {
		// unbounded
	}

	@Override
	public void setLocale(Locale locale) {
		// the exception handling's locale stays out of the stored answer
	}

}
