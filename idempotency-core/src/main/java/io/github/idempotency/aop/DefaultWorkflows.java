package io.github.idempotency.aop;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import org.springframework.util.ClassUtils;

/**
 * The workflow of an {@code @Idempotent} method that names none: one per method, so that
 * two operations never share records by accident. It is the bean's fully qualified class
 * name, the method name and the short names of the parameter types:
 * {@code com.example.PaymentService.charge(PaymentRequest,int)}. Two overloads of one class
 * whose parameter types differ only in their packages would read the same; that fails the
 * start, naming both methods. A name longer than {@value #MAX_LENGTH} characters keeps its
 * beginning and ends with {@code ~} and 16 hex digits of its SHA-256, so that it fits a
 * database column.
 */
final class DefaultWorkflows {

	static final int MAX_LENGTH = 200;

	private static final int HASH_LENGTH = 16;

	private final Map<String, Method> assigned = new ConcurrentHashMap<>();

	/**
	 * The default workflow of {@code method} as called on {@code targetClass}.
	 * @param method the annotated method
	 * @param targetClass the class of the bean
	 * @return the workflow
	 * @throws IllegalArgumentException when another method of the class has the same
	 * default workflow
	 */
	String of(Method method, Class<?> targetClass) {
		String workflow = name(method, ClassUtils.getUserClass(targetClass));
		Method previous = this.assigned.putIfAbsent(workflow, method);
		if (previous != null && !previous.equals(method)) {
			throw new IllegalArgumentException("its default workflow '" + workflow + "' is also the default workflow of "
					+ previous.toGenericString() + "; set 'workflow' on one of them");
		}
		return workflow;
	}

	static String name(Method method, Class<?> targetClass) {
		String parameters = Arrays.stream(method.getParameterTypes())
			.map(ClassUtils::getShortName)
			.collect(Collectors.joining(",", "(", ")"));
		String name = targetClass.getName() + "." + method.getName() + parameters;
		if (name.length() <= MAX_LENGTH) {
			return name;
		}
		String hash = HexFormat.of().formatHex(sha256(name)).substring(0, HASH_LENGTH);
		return name.substring(0, MAX_LENGTH - HASH_LENGTH - 1) + "~" + hash;
	}

	private static byte[] sha256(String text) {
		try {
			return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is not available", ex);
		}
	}

}
