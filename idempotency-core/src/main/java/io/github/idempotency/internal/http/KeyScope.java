package io.github.idempotency.internal.http;

import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.internal.RejectedKey;

import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.StringUtils;

/**
 * Scopes a key by the caller's identity, the same way on both HTTP stacks: the identity
 * and the key, length-prefixed, so that no identity and key pair meets another, nor a key
 * without an identity ({@code -|key}).
 */
public final class KeyScope {

	private KeyScope() {
	}

	/**
	 * The scoped key.
	 * @param key the key as the request gave it (the header's or the key expression's)
	 * @param identity the caller's identity, or {@code null} for an anonymous caller
	 * @return the key to claim; {@code key} itself when it is missing or blank (the engine
	 * rejects it as missing)
	 */
	public static @Nullable Object scoped(@Nullable Object key, @Nullable Object identity) {
		if (key == null || key instanceof RejectedKey) {
			return key;
		}
		String text = (key instanceof byte[] bytes) ? new String(bytes, StandardCharsets.UTF_8) : key.toString();
		if (!StringUtils.hasText(text)) {
			return key;
		}
		return (identity != null) ? identity.toString().length() + ":" + identity + "|" + text : "-|" + text;
	}

	/**
	 * The expression that names the caller ({@code idempotency.web.principal}), parsed once.
	 * @param principal the expression's text, or {@code null}
	 * @return the expression, or {@code null} when none is set
	 * @throws IllegalArgumentException when it is not valid SpEL
	 */
	public static @Nullable Expression principal(@Nullable String principal) {
		if (!StringUtils.hasText(principal)) {
			return null;
		}
		try {
			return new SpelExpressionParser().parseExpression(principal);
		}
		catch (ParseException ex) {
			throw new IllegalArgumentException(
					"idempotency.web.principal is not a valid SpEL expression: " + ex.getMessage(), ex);
		}
	}

}
