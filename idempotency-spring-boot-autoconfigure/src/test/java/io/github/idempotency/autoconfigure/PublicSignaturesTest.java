package io.github.idempotency.autoconfigure;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.NodeList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Nothing internal in the API: in every published module (the reactor's modules that are
 * not {@code idempotency.publish.skip}), no public or protected signature of a class
 * outside an {@code internal} package names a type of an {@code internal} package: not
 * its supertypes, type parameters, fields, constructors or methods (parameters, results,
 * exceptions, generic arguments). japicmp leaves {@code internal} packages out, so such a
 * signature would be a public contract that changes unchecked.
 */
class PublicSignaturesTest {

	private final Path root = Path.of("").toAbsolutePath().getParent();

	@Test
	void noPublicSignatureNamesAnInternalType() throws Exception {
		List<String> modules = publishedModulesWithCode();
		assertThat(modules).as("the published modules with code")
			.contains("idempotency-core", "idempotency-spring-boot-autoconfigure");
		List<String> problems = new ArrayList<>();
		int checked = 0;
		for (String module : modules) {
			Path classes = this.root.resolve(module).resolve("target/classes");
			assertThat(classes).as(module + "'s compiled classes (build the module first)").isDirectory();
			for (String name : classNames(classes)) {
				Class<?> type = Class.forName(name, false, getClass().getClassLoader());
				if (isInternal(type) || !isExposed(type)) {
					continue;
				}
				checked++;
				check(type, problems);
			}
		}
		assertThat(checked).as("the public classes checked").isGreaterThan(50);
		assertThat(problems).as("public signatures that name an internal type").isEmpty();
	}

	private static void check(Class<?> type, List<String> problems) {
		String owner = type.getName();
		if (type.getGenericSuperclass() != null) {
			checkTypes(owner + " extends", List.of(type.getGenericSuperclass()), problems);
		}
		checkTypes(owner + " implements", List.of(type.getGenericInterfaces()), problems);
		checkTypes(owner + " type parameters", List.of(type.getTypeParameters()), problems);
		for (Field field : type.getDeclaredFields()) {
			if (isExposed(type, field.getModifiers()) && !field.isSynthetic()) {
				checkTypes(owner + "." + field.getName(), List.of(field.getGenericType()), problems);
			}
		}
		for (Constructor<?> constructor : type.getDeclaredConstructors()) {
			if (isExposed(type, constructor.getModifiers()) && !constructor.isSynthetic()) {
				checkExecutable(owner + ".<init>", constructor, problems);
			}
		}
		for (Method method : type.getDeclaredMethods()) {
			if (isExposed(type, method.getModifiers()) && !method.isSynthetic() && !method.isBridge()) {
				checkExecutable(owner + "." + method.getName(), method, problems);
				checkTypes(owner + "." + method.getName() + " returns", List.of(method.getGenericReturnType()),
						problems);
			}
		}
	}

	private static void checkExecutable(String name, Executable executable, List<String> problems) {
		checkTypes(name + " parameters", List.of(executable.getGenericParameterTypes()), problems);
		checkTypes(name + " throws", List.of(executable.getGenericExceptionTypes()), problems);
		checkTypes(name + " type parameters", List.of(executable.getTypeParameters()), problems);
	}

	private static void checkTypes(String where, List<? extends Type> types, List<String> problems) {
		Set<Type> seen = new HashSet<>();
		for (Type type : types) {
			String internal = internalIn(type, seen);
			if (internal != null) {
				problems.add(where + ": " + internal);
			}
		}
	}

	/** The first internal class {@code type} names, or {@code null}. */
	private static String internalIn(Type type, Set<Type> seen) {
		if (!seen.add(type)) {
			return null;
		}
		List<Type> parts = new ArrayList<>();
		if (type instanceof Class<?> raw) {
			Class<?> component = raw;
			while (component.isArray()) {
				component = component.getComponentType();
			}
			return isInternal(component) ? component.getName() : null;
		}
		if (type instanceof ParameterizedType parameterized) {
			parts.add(parameterized.getRawType());
			if (parameterized.getOwnerType() != null) {
				parts.add(parameterized.getOwnerType());
			}
			parts.addAll(List.of(parameterized.getActualTypeArguments()));
		}
		else if (type instanceof WildcardType wildcard) {
			parts.addAll(List.of(wildcard.getUpperBounds()));
			parts.addAll(List.of(wildcard.getLowerBounds()));
		}
		else if (type instanceof GenericArrayType array) {
			parts.add(array.getGenericComponentType());
		}
		else if (type instanceof TypeVariable<?> variable) {
			parts.addAll(List.of(variable.getBounds()));
		}
		for (Type part : parts) {
			String internal = internalIn(part, seen);
			if (internal != null) {
				return internal;
			}
		}
		return null;
	}

	private static boolean isInternal(Class<?> type) {
		String name = type.getPackageName();
		return name.startsWith("io.github.idempotency.")
				&& (name.endsWith(".internal") || name.contains(".internal."));
	}

	/** Whether code outside the package can name the class: public, or protected, all the way out. */
	private static boolean isExposed(Class<?> type) {
		for (Class<?> current = type; current != null; current = current.getEnclosingClass()) {
			if (current.isAnonymousClass() || current.isLocalClass() || current.isSynthetic()) {
				return false;
			}
			int modifiers = current.getModifiers();
			boolean nestedProtected = current.getEnclosingClass() != null && Modifier.isProtected(modifiers);
			if (!Modifier.isPublic(modifiers) && !nestedProtected) {
				return false;
			}
		}
		return true;
	}

	/** Whether code outside the package sees the member: public, or protected in a class that can be extended. */
	private static boolean isExposed(Class<?> owner, int modifiers) {
		return Modifier.isPublic(modifiers) || (Modifier.isProtected(modifiers) && !Modifier.isFinal(owner.getModifiers()));
	}

	private static List<String> classNames(Path classes) throws IOException {
		try (Stream<Path> files = Files.walk(classes)) {
			return files.filter((file) -> file.toString().endsWith(".class"))
				.map((file) -> classes.relativize(file).toString())
				.filter((file) -> !file.endsWith("package-info.class") && !file.endsWith("module-info.class"))
				.map((file) -> file.substring(0, file.length() - ".class".length()).replace(File.separatorChar, '.'))
				.sorted()
				.toList();
		}
	}

	/** The directories of the reactor's modules that are published and have main sources. */
	private List<String> publishedModulesWithCode() throws Exception {
		Document parent = xml(this.root.resolve("pom.xml"));
		TreeSet<String> published = new TreeSet<>();
		NodeList modules = parent.getElementsByTagName("module");
		for (int i = 0; i < modules.getLength(); i++) {
			String module = modules.item(i).getTextContent().trim();
			Document pom = xml(this.root.resolve(module).resolve("pom.xml"));
			NodeList skip = pom.getElementsByTagName("idempotency.publish.skip");
			boolean skipped = skip.getLength() > 0 && "true".equals(skip.item(0).getTextContent().trim());
			if (!skipped && Files.isDirectory(this.root.resolve(module).resolve("src/main/java"))) {
				published.add(module);
			}
		}
		return List.copyOf(published);
	}

	private static Document xml(Path file) throws Exception {
		return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file.toFile());
	}

}
