package io.github.idempotency.web.reactive;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;

/**
 * Answers the first request of a recorded permanent failure on WebFlux with what the
 * application's exception handling answered when {@link ReactiveHandlerMethodIdempotency}
 * recorded it, so that the handling runs once and the stored answer is the one the client
 * got. Ordered first: it answers only its own exception, which nothing else handles.
 */
@ControllerAdvice
@Order(Ordered.HIGHEST_PRECEDENCE)
public class CapturedAnswerHandler {

	@ExceptionHandler(CapturedAnswer.class)
	ResponseEntity<byte[]> captured(CapturedAnswer answer) {
		return answer.toResponse();
	}

}
