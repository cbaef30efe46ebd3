package io.github.idempotency.aop;

import java.lang.reflect.Array;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.util.Arrays;
import java.util.Objects;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

import org.springframework.core.ResolvableType;

/**
 * The result type of an annotated method as called on a bean's class: every type variable
 * of the declared generic return type replaced by what the class binds it to, so that a
 * stored result is read back as what the method really returns. A method declared in
 * {@code Handler<R>} and called on {@code ReceiptHandler extends Handler<Receipt>} returns
 * {@code Receipt}, {@code List<R>} becomes {@code List<Receipt>}.
 */
final class ResultTypes {

	private ResultTypes() {
	}

	/**
	 * The return type of {@code method} with the type variables that {@code targetClass}
	 * binds resolved; {@code Mono<T>} for a Kotlin {@code suspend fun} returning {@code T}
	 * ({@link SuspendingFunctions}).
	 * @param method the method, declared in {@code targetClass} or one of its supertypes
	 * @param targetClass the class of the bean
	 * @return a type without type variables
	 * @throws IllegalArgumentException when a type variable is not bound by
	 * {@code targetClass} (a generic bean class, a generic method)
	 */
	static Type resolve(Method method, Class<?> targetClass) {
		return resolve(SuspendingFunctions.returnType(method), targetClass);
	}

	private static Type resolve(Type type, Class<?> targetClass) {
		if (type instanceof Class<?>) {
			return type;
		}
		if (type instanceof ParameterizedType parameterized) {
			Type[] arguments = Arrays.stream(parameterized.getActualTypeArguments())
				.map((argument) -> resolve(argument, targetClass))
				.toArray(Type[]::new);
			Type owner = parameterized.getOwnerType();
			return new ResolvedParameterizedType((Class<?>) parameterized.getRawType(),
					(owner != null) ? resolve(owner, targetClass) : null, arguments);
		}
		if (type instanceof GenericArrayType array) {
			Type component = resolve(array.getGenericComponentType(), targetClass);
			return (component instanceof Class<?> componentClass) ? Array.newInstance(componentClass, 0).getClass()
					: new ResolvedGenericArrayType(component);
		}
		if (type instanceof WildcardType wildcard) {
			// what Jackson reads a wildcard as: its upper bound
			return resolve(wildcard.getUpperBounds()[0], targetClass);
		}
		if (type instanceof TypeVariable<?> variable) {
			return resolve(bound(variable, targetClass), targetClass);
		}
		throw new IllegalArgumentException("its return type contains " + type + ", which cannot be resolved");
	}

	private static Type bound(TypeVariable<?> variable, Class<?> targetClass) {
		// a variable resolves to a type, or to a variable of a subclass one level closer
		// to targetClass; a variable of targetClass itself resolves to itself: unbound
		if (variable.getGenericDeclaration() instanceof Class<?> declaring) {
			ResolvableType asDeclaring = ResolvableType.forClass(targetClass).as(declaring);
			int index = Arrays.asList(declaring.getTypeParameters()).indexOf(variable);
			if (index >= 0 && index < asDeclaring.getGenerics().length) {
				Type bound = asDeclaring.getGeneric(index).getType();
				if (!bound.equals(variable)) {
					return bound;
				}
			}
		}
		if (variable.getGenericDeclaration() instanceof Method) {
			throw new IllegalArgumentException("its return type uses the type variable " + variable.getName()
					+ " of the generic method itself, so a stored result could not be read back as what a call"
					+ " returns; return a concrete type");
		}
		throw new IllegalArgumentException("its return type uses the type variable " + variable.getName() + " of "
				+ variable.getGenericDeclaration() + ", which " + targetClass.getName() + " leaves unbound, so a"
				+ " stored result could not be read back as what the method returns; bind it in the bean's class"
				+ " (class ReceiptHandler extends Handler<Receipt>) or return a concrete type");
	}

	private record ResolvedParameterizedType(Class<?> raw, @Nullable Type owner,
			Type[] arguments) implements ParameterizedType {

		@Override
		public Type[] getActualTypeArguments() {
			return this.arguments.clone();
		}

		@Override
		public Type getRawType() {
			return this.raw;
		}

		@Override
		public @Nullable Type getOwnerType() {
			return this.owner;
		}

		@Override
		public boolean equals(Object other) {
			return other instanceof ParameterizedType that && this.raw.equals(that.getRawType())
					&& Objects.equals(this.owner, that.getOwnerType())
					&& Arrays.equals(this.arguments, that.getActualTypeArguments());
		}

		@Override
		public int hashCode() {
			return Arrays.hashCode(this.arguments) ^ Objects.hashCode(this.owner) ^ this.raw.hashCode();
		}

		@Override
		public String toString() {
			return this.raw.getTypeName() + Arrays.stream(this.arguments)
				.map(Type::getTypeName)
				.collect(Collectors.joining(", ", "<", ">"));
		}

	}

	private record ResolvedGenericArrayType(Type component) implements GenericArrayType {

		@Override
		public Type getGenericComponentType() {
			return this.component;
		}

		@Override
		public boolean equals(Object other) {
			return other instanceof GenericArrayType that && this.component.equals(that.getGenericComponentType());
		}

		@Override
		public int hashCode() {
			return this.component.hashCode();
		}

		@Override
		public String toString() {
			return this.component.getTypeName() + "[]";
		}

	}

}
