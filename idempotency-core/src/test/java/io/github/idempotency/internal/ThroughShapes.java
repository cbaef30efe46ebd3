package io.github.idempotency.internal;

import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.ArgumentsProvider;
import org.junit.jupiter.params.support.ParameterDeclarations;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * The shapes a suite's cases run through in a test class, or in the test class a suite is
 * nested in ({@code EngineSuites}' subclasses): the constants of each enum named. A suite's
 * case takes them with {@code @ArgumentsSource(ThroughShapes.Source.class)}; without the
 * annotation they are the {@link JavaShape}s. The Kotlin tests name their {@code suspend fun} shape, so that the
 * suite is written once for both languages.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Inherited
public @interface ThroughShapes {

	/** Enums whose constants are the shapes. */
	Class<? extends Shape>[] value();

	/** The shapes of the test class at hand. */
	final class Source implements ArgumentsProvider {

		@Override
		public Stream<? extends Arguments> provideArguments(ParameterDeclarations parameters,
				ExtensionContext context) {
			List<Class<?>> classes = new ArrayList<>(context.getEnclosingTestClasses());
			classes.add(context.getRequiredTestClass());
			Collections.reverse(classes);
			return classes.stream()
				.flatMap((type) -> AnnotationSupport.findAnnotation(type, ThroughShapes.class).stream())
				.findFirst()
				.map((named) -> Arrays.stream(named.value())
					.<Shape>flatMap((shapes) -> Arrays.stream(shapes.getEnumConstants())))
				.orElseGet(() -> Arrays.stream(JavaShape.values()))
				.map(Arguments::of);
		}

	}

}
