package io.github.idempotency.web;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Type;

import jakarta.servlet.http.HttpServletRequest;

import io.github.idempotency.Idempotent;
import org.springframework.core.MethodParameter;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpInputMessage;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.util.StringUtils;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.servlet.mvc.method.annotation.RequestBodyAdviceAdapter;

/**
 * Digests the body of a request to an {@code @Idempotent} handler method as the client
 * sent it, while the method's {@code @RequestBody} (or {@code HttpEntity}) argument is
 * read: ordered first, before any advice that changes the body, and without keeping the
 * body in memory. {@link HandlerMethodIdempotency} fingerprints the digest.
 */
@ControllerAdvice
@Order(Ordered.HIGHEST_PRECEDENCE)
public class IdempotentRequestBodyAdvice extends RequestBodyAdviceAdapter {

	@Override
	public boolean supports(MethodParameter methodParameter, Type targetType,
			Class<? extends HttpMessageConverter<?>> converterType) {
		Idempotent idempotent = AnnotatedElementUtils.findMergedAnnotation(methodParameter.getExecutable(),
				Idempotent.class);
		return idempotent != null && !StringUtils.hasText(idempotent.payload());
	}

	@Override
	public HttpInputMessage beforeBodyRead(HttpInputMessage inputMessage, MethodParameter parameter, Type targetType,
			Class<? extends HttpMessageConverter<?>> converterType) throws IOException {
		if (!(RequestContextHolder.getRequestAttributes() instanceof ServletRequestAttributes attributes)) {
			return inputMessage;
		}
		HttpServletRequest request = attributes.getRequest();
		InputStream body = RequestFingerprint.readThrough(request, inputMessage.getBody());
		return new HttpInputMessage() {

			@Override
			public InputStream getBody() {
				return body;
			}

			@Override
			public HttpHeaders getHeaders() {
				return inputMessage.getHeaders();
			}

		};
	}

}
