package io.github.idempotency.internal.http;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

import org.springframework.core.MethodParameter;
import org.springframework.core.ResolvableType;

/**
 * Whether a handler method takes the parts of a multipart request, on either stack: a
 * {@code @RequestPart} parameter, or one of a part's type ({@code MultipartFile},
 * {@code jakarta.servlet.http.Part}, WebFlux's {@code Part}, {@code FilePart},
 * {@code FormFieldPart}), also inside a {@code Mono}, {@code Flux}, collection or map. A
 * request's fingerprint covers its bytes as received, which the multipart reader needs to
 * itself: such a method names its {@code payload}.
 */
public final class MultipartParameters {

	private static final String[] PART_TYPES = { "org.springframework.web.multipart.",
			"org.springframework.http.codec.multipart.", "jakarta.servlet.http.Part" };

	private MultipartParameters() {
	}

	/**
	 * Why a handler method cannot be fingerprinted by its request, when it takes parts.
	 * @param method the handler method
	 * @return the reason, naming {@code payload}; {@code null} when it takes no part
	 */
	public static @Nullable String problem(Method method) {
		for (int i = 0; i < method.getParameterCount(); i++) {
			MethodParameter parameter = new MethodParameter(method, i);
			if (parameter.hasParameterAnnotation(org.springframework.web.bind.annotation.RequestPart.class)
					|| isPart(ResolvableType.forMethodParameter(parameter))) {
				return "it takes the parts of a multipart request (parameter " + (i + 1) + ", "
						+ parameter.getParameterType().getSimpleName() + "), which the request's fingerprint cannot "
						+ "read without taking them from the method: name what identifies the request with the "
						+ "annotation's payload (e.g. payload = \"#orderId\"), or take the body as a whole";
			}
		}
		return null;
	}

	private static boolean isPart(ResolvableType type) {
		Class<?> raw = type.resolve();
		if (raw != null) {
			String name = raw.getName();
			for (String part : PART_TYPES) {
				if (name.startsWith(part)) {
					return true;
				}
			}
		}
		for (ResolvableType generic : type.getGenerics()) {
			if (isPart(generic)) {
				return true;
			}
		}
		return false;
	}

}
