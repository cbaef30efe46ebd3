package io.github.idempotency;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes a Spring bean method idempotent: the first call with a given key (within its
 * workflow) runs the method and stores its result; every later call with the same key
 * returns the stored result without running the method.
 *
 * <pre class="code">
 * &#64;KafkaListener(topics = "payments")
 * &#64;Idempotent(key = "#msg.headers['idempotency-key']", workflow = "payment")
 * public Receipt onPayment(Message&lt;PaymentRequested&gt; msg) { ... }
 * </pre>
 *
 * Expressions are parsed once, when the bean is created; a malformed one fails the
 * application's start with the method named in the message.
 *
 * @see IdempotencyTemplate the programmatic equivalent
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Idempotent {

	/**
	 * SpEL expression for the idempotency key, evaluated on the method's arguments
	 * ({@code #name}, {@code #p0}, {@code #a0}). A {@code String} is used as is, other
	 * values by {@code toString()}; {@code byte[]}, a Kafka {@code Header} and a
	 * {@code ByteBuffer} as the text they decode to when they are valid UTF-8, else as
	 * U+FFFD followed by their base64url form (text that begins with U+FFFD gets a second
	 * one), so that two different keys never meet.
	 * <p>
	 * Required, except on an HTTP handler method (Spring MVC or WebFlux: a
	 * {@code @RequestMapping} method of a {@code @Controller}), where an empty key means the
	 * {@code Idempotency-Key} request header ({@code idempotency.web.key-header}). Any other method without a key fails the
	 * application's start.
	 * @return the key expression
	 */
	String key() default "";

	/**
	 * Scope of the key: the same key in two workflows names two operations, and methods
	 * that name the same workflow share records. Defaults to one workflow per method: the
	 * bean's fully qualified class name, the method name and the short names of its
	 * parameter types, {@code com.example.PaymentService.charge(PaymentRequest)}.
	 * @return the workflow name
	 */
	String workflow() default "";

	/**
	 * SpEL expression for what is fingerprinted (SHA-256), so that a key reused with a
	 * different payload is caught ({@link IdempotencyKeyReusedException}). Empty: no
	 * fingerprint, except on an HTTP handler method (Spring MVC or WebFlux), where empty means
	 * the request's method, path and body.
	 * @return the payload expression
	 */
	String payload() default "";

	/**
	 * How long a claim is held without renewal, as a duration string ({@code 30s},
	 * {@code PT30S}). Empty: {@code idempotency.lease-ttl}. It is renewed at the same
	 * fraction of it as {@code idempotency.lease-renewal-interval} is of
	 * {@code idempotency.lease-ttl} (a third by default).
	 * @return the lease duration
	 */
	String leaseTtl() default "";

	/**
	 * How long a finished record is kept. Empty: {@code idempotency.retention}.
	 * @return the retention duration
	 */
	String retention() default "";

	/**
	 * What a call does when the same key is running elsewhere.
	 * @return the policy
	 */
	InProgressPolicy onInProgress() default InProgressPolicy.DEFAULT;

	/**
	 * Exception types that are permanent: when the method throws one of them (or a
	 * subtype) the failure is stored and every later call with the key throws
	 * {@link IdempotentFailureReplayedException}. Any other exception releases the key so
	 * that a redelivery runs the method again.
	 * @return the permanent failure types
	 */
	Class<? extends Throwable>[] recordFailureFor() default {};

	/**
	 * The name of a {@code List} parameter whose elements are each an operation of their
	 * own: a batch listener ({@code @KafkaListener(batch = "true")}). {@link #key()} and
	 * {@link #payload()} are then evaluated once per element, bound as {@code #item} (its
	 * position in the list as {@code #index}; the method's arguments stay available). The
	 * method is called once with a list of only the elements it must run, in their order,
	 * and must return {@code void}. Duplicates, elements that failed permanently before
	 * and a key named twice are left out; see docs/brokers.md, "Batch listeners". Empty: the method
	 * is one operation.
	 * <pre class="code">
	 * &#64;KafkaListener(topics = "payments", batch = "true")
	 * &#64;Idempotent(batch = "records", key = "#item.headers.lastHeader('idempotency-key')", workflow = "payment")
	 * public void onPayments(List&lt;ConsumerRecord&lt;String, Payment&gt;&gt; records) { ... }
	 * </pre>
	 * @return the name of the batch parameter
	 */
	String batch() default "";

}
