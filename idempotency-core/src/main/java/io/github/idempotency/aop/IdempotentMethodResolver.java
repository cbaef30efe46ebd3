package io.github.idempotency.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.BatchFailures;
import io.github.idempotency.Idempotent;
import io.github.idempotency.IdempotencyRuntime;
import io.github.idempotency.internal.IdempotencyEngine;
import io.github.idempotency.internal.InvalidIdempotentMethodException;
import io.github.idempotency.internal.OperationDefinition;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.context.expression.AnnotatedElementKey;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelCompilerMode;
import org.springframework.expression.spel.SpelParserConfiguration;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.format.datetime.standard.DurationFormatterUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

/**
 * Reads {@link Idempotent} from a method once: parses its expressions, resolves its
 * durations and prepares its operation with the engine. A method that cannot work (a
 * malformed expression, one that names no parameter or reads what the parameter's declared
 * class does not have, a bad duration, a result type Jackson cannot round-trip) fails with
 * an {@link InvalidIdempotentMethodException} that names it.
 */
public final class IdempotentMethodResolver {

	private final Map<AnnotatedElementKey, IdempotentMethod> cache = new ConcurrentHashMap<>(64);

	private final SpelExpressionParser parser;

	private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();

	private final DefaultWorkflows defaultWorkflows = new DefaultWorkflows();

	private final IdempotencyEngine engine;

	private final @Nullable BeanFactory beanFactory;

	private final @Nullable BeanFactoryResolver beanResolver;

	private final List<IdempotentMethodAdapter> adapters;

	private final BatchFailures batchFailures;

	/**
	 * Creates a resolver whose methods are not adapted.
	 * @param engine the engine
	 * @param beanFactory the bean factory for {@code @bean} references and placeholders
	 */
	public IdempotentMethodResolver(IdempotencyRuntime engine, @Nullable BeanFactory beanFactory) {
		this(engine, beanFactory, List.of(), BatchFailures.NONE);
	}

	/**
	 * Creates a resolver whose methods may be adapted, and whose batch methods report the
	 * failure of one element as {@code batchFailures} knows (Spring Kafka's
	 * {@code BatchListenerFailedException}).
	 * @param engine the engine
	 * @param beanFactory the bean factory for {@code @bean} references and placeholders
	 * @param adapters the adapters, the first that answers for a method adapts it
	 * @param batchFailures how a batch method reports the failure of one element
	 * @throws IllegalArgumentException when {@code engine} is not the starter's
	 */
	public IdempotentMethodResolver(IdempotencyRuntime engine, @Nullable BeanFactory beanFactory,
			List<IdempotentMethodAdapter> adapters, BatchFailures batchFailures) {
		this.batchFailures = batchFailures;
		this.engine = IdempotencyEngine.of(engine);
		this.adapters = List.copyOf(adapters);
		this.beanFactory = beanFactory;
		this.beanResolver = (beanFactory != null) ? new BeanFactoryResolver(beanFactory) : null;
		ClassLoader classLoader = (beanFactory instanceof ConfigurableBeanFactory configurable)
				? configurable.getBeanClassLoader() : ClassUtils.getDefaultClassLoader();
		this.parser = new SpelExpressionParser(new SpelParserConfiguration(SpelCompilerMode.MIXED, classLoader));
	}

	/**
	 * The resolved annotation of {@code method} as called on {@code targetClass}.
	 * @param method the invoked method
	 * @param targetClass the class of the target bean
	 * @return the resolved method, or {@code null} when it is not annotated
	 */
	@Nullable IdempotentMethod resolve(Method method, Class<?> targetClass) {
		AnnotatedElementKey cacheKey = new AnnotatedElementKey(method, targetClass);
		IdempotentMethod resolved = this.cache.get(cacheKey);
		if (resolved == null) {
			Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
			Idempotent found = AnnotatedElementUtils.findMergedAnnotation(specific, Idempotent.class);
			Idempotent annotation = (found != null) ? found
					: AnnotatedElementUtils.findMergedAnnotation(method, Idempotent.class);
			if (annotation == null) {
				return null;
			}
			resolved = this.cache.computeIfAbsent(cacheKey, (key) -> create(specific, targetClass, annotation));
		}
		return resolved;
	}

	/**
	 * The engine the resolved operations run on.
	 * @return the engine
	 */
	IdempotencyEngine engine() {
		return this.engine;
	}

	/**
	 * How batch methods report the failure of one element.
	 * @return the batch failures
	 */
	BatchFailures batchFailures() {
		return this.batchFailures;
	}

	EvaluationContext evaluationContext(IdempotentMethod method, @Nullable Object[] arguments) {
		MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(null, method.method(), arguments,
				this.parameterNames);
		if (this.beanResolver != null) {
			context.setBeanResolver(this.beanResolver);
		}
		return context;
	}

	private IdempotentMethod create(Method method, Class<?> targetClass, Idempotent annotation) {
		String name = ClassUtils.getUserClass(targetClass).getName() + "." + method.getName();
		try {
			String workflow = StringUtils.hasText(annotation.workflow()) ? resolvePlaceholders(annotation.workflow())
					: this.defaultWorkflows.of(method, targetClass);
			IdempotentMethodAdapter.Adaptation adaptation = adapt(method, targetClass, annotation);
			Expression key = (adaptation != null && !StringUtils.hasText(annotation.key())) ? null
					: parse("key", annotation.key(), method, annotation);
			Expression payload = StringUtils.hasText(annotation.payload())
					? parse("payload", annotation.payload(), method, annotation) : null;
			Type resultType = ResultTypes.resolve(method, ClassUtils.getUserClass(targetClass));
			@Nullable Duration leaseTtl = duration("leaseTtl", annotation.leaseTtl());
			@Nullable Duration retention = duration("retention", annotation.retention());
			boolean fingerprinted = payload != null;
			List<Class<? extends Throwable>> recordFailureFor = List.of(annotation.recordFailureFor());
			if (adaptation != null) {
				resultType = adaptation.resultType(resultType);
				fingerprinted = adaptation.fingerprinted(fingerprinted);
				recordFailureFor = adaptation.recordFailureFor(recordFailureFor);
			}
			OperationDefinition definition = OperationDefinition.of(workflow, resultType)
				.fingerprinted(fingerprinted)
				.leaseTtl(leaseTtl)
				.retention(retention)
				.onInProgress(annotation.onInProgress())
				.recordFailureFor(recordFailureFor)
				.build();
			return new IdempotentMethod(method, this.engine.prepare(definition), key, payload, adaptation,
					batchParameter(method, annotation.batch()));
		}
		catch (MethodProblem ex) {
			throw new InvalidIdempotentMethodException(name, ex.problem(), ex.fix(), ex);
		}
		catch (RuntimeException ex) {
			throw new InvalidIdempotentMethodException(name, String.valueOf(ex.getMessage()), null, ex);
		}
	}

	private IdempotentMethodAdapter.@Nullable Adaptation adapt(Method method, Class<?> targetClass,
			Idempotent annotation) {
		IdempotentMethodAdapter.Adaptation found = null;
		IdempotentMethodAdapter first = null;
		for (IdempotentMethodAdapter adapter : this.adapters) {
			IdempotentMethodAdapter.Adaptation adaptation = adapter.adapt(method, targetClass, annotation);
			if (adaptation != null && first != null) {
				// an HTTP handler that is also a listener: each adapter would store and answer differently
				throw new IllegalArgumentException("both " + first.getClass().getSimpleName() + " and "
						+ adapter.getClass().getSimpleName() + " adapt it (is it an HTTP handler and a listener?); "
						+ "make it one or the other");
			}
			if (adaptation != null) {
				found = adaptation;
				first = adapter;
			}
		}
		return found;
	}

	private int batchParameter(Method method, String batch) {
		if (!StringUtils.hasText(batch)) {
			return -1;
		}
		if (method.getReturnType() != void.class) {
			throw new IllegalArgumentException("a batch method must return void, not " + method.getGenericReturnType());
		}
		String name = batch.startsWith("#") ? batch.substring(1) : batch;
		String[] names = this.parameterNames.getParameterNames(method);
		Class<?>[] types = method.getParameterTypes();
		for (int i = 0; i < types.length; i++) {
			if ((names != null && name.equals(names[i])) || name.equals("p" + i) || name.equals("a" + i)) {
				if (types[i] != List.class) {
					throw new IllegalArgumentException("'batch' = '" + batch + "' names a parameter of type "
							+ types[i].getName() + ", not java.util.List");
				}
				return i;
			}
		}
		throw new IllegalArgumentException("'batch' = '" + batch + "' names no parameter of the method");
	}

	private Expression parse(String attribute, String expression, Method method, Idempotent annotation) {
		if (!StringUtils.hasText(expression)) {
			throw new MethodProblem("'" + attribute + "' must not be empty" + ("key".equals(attribute)
					? " (only an HTTP handler method, Spring MVC or WebFlux, takes its key from a request header)" : ""),
					"give it a SpEL expression on the method's parameters, such as #p0.id");
		}
		Expression parsed;
		try {
			parsed = this.parser.parseExpression(expression);
		}
		catch (ParseException ex) {
			throw new MethodProblem("'" + attribute + "' is not a valid SpEL expression: " + ex.getMessage(),
					"correct its syntax", ex);
		}
		MethodProblem problem = ExpressionCheck.problem(parsed, method, this.parameterNames.getParameterNames(method),
				StringUtils.hasText(annotation.batch()));
		if (problem != null) {
			throw problem.of("'" + attribute + "' = " + expression + ": ");
		}
		return parsed;
	}

	private @Nullable Duration duration(String attribute, String value) {
		if (!StringUtils.hasText(value)) {
			return null;
		}
		try {
			Duration duration = DurationFormatterUtils.detectAndParse(resolvePlaceholders(value));
			if (duration.isNegative() || duration.isZero()) {
				throw new IllegalArgumentException("must be positive");
			}
			return duration;
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("'" + attribute + "' = '" + value + "' is not a valid duration: "
					+ ex.getMessage(), ex);
		}
	}

	private String resolvePlaceholders(String value) {
		if (this.beanFactory instanceof ConfigurableBeanFactory configurable) {
			String resolved = configurable.resolveEmbeddedValue(value);
			return (resolved != null) ? resolved : value;
		}
		return value;
	}

}
