package io.github.idempotency.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.expression.Expression;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.Assign;
import org.springframework.expression.spel.ast.CompoundExpression;
import org.springframework.expression.spel.ast.MethodReference;
import org.springframework.expression.spel.ast.PropertyOrFieldReference;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.support.ReflectivePropertyAccessor;
import org.springframework.util.ClassUtils;

/**
 * What can be told about a key or payload expression before any call, from the method's
 * parameters alone, so that an expression that fails on every call fails the start
 * instead:
 * <ul>
 * <li>a {@code #name} that is neither a parameter's name nor {@code #p0}/{@code #a0} and
 * the like (it would always be {@code null});</li>
 * <li>a {@code #param.x} or {@code #param.x(...)} whose parameter's declared class has
 * no property {@code x} ({@code getX()}, {@code isX()}, {@code x()} or a public field)
 * or no public method {@code x}, looked up as SpEL looks it up at run time.</li>
 * </ul>
 * Conservative: only the first step after a parameter is checked, and only on a parameter
 * declared as a concrete class; one declared as {@code Object}, an interface or an
 * abstract class is left to run time, since its arguments may be of any subtype. An
 * expression that assigns variables is not checked for unknown names.
 */
final class ExpressionCheck {

	private static final DeclaredTypeAccessor PROPERTIES = new DeclaredTypeAccessor();

	private ExpressionCheck() {
	}

	/**
	 * Why {@code expression} cannot work on the arguments of {@code method}.
	 * @param expression the parsed expression
	 * @param method the annotated method
	 * @param parameterNames the names of its parameters, when they can be discovered
	 * @param batch whether the method is a batch method ({@code #item}, {@code #index})
	 * @return the reason and how to correct it, or {@code null} when nothing certain is wrong
	 */
	static @Nullable MethodProblem problem(Expression expression, Method method, @Nullable String @Nullable [] parameterNames,
			boolean batch) {
		if (!(expression instanceof SpelExpression spel)) {
			return null;
		}
		Map<String, Class<?>> variables = new LinkedHashMap<>();
		if (batch) {
			// a batch method's expressions see each element as #item and its position as #index
			variables.put("item", Object.class);
			variables.put("index", Integer.class);
		}
		List<String> parameters = new ArrayList<>();
		Class<?>[] types = method.getParameterTypes();
		for (int i = 0; i < types.length; i++) {
			String name = (parameterNames != null && i < parameterNames.length) ? parameterNames[i] : null;
			if (name != null) {
				variables.put(name, types[i]);
			}
			variables.put("p" + i, types[i]);
			variables.put("a" + i, types[i]);
			parameters.add(((name != null) ? "#" + name + " (#p" + i + ", #a" + i + ")" : "#p" + i + " (#a" + i + ")"));
		}
		String known = parameters.isEmpty() ? "the method has no parameters: use an expression that needs none"
				: "name one of its parameters: " + String.join(", ", parameters) + ((parameterNames != null) ? ""
						: "; their names are not known: compile with -parameters to refer to them by name");
		SpelNode ast = spel.getAST();
		return check(ast, new Scope(variables, !assigns(ast), known));
	}

	private static @Nullable MethodProblem check(SpelNode node, Scope scope) {
		if (node instanceof VariableReference variable && scope.checkNames()) {
			String name = name(variable);
			if (!name.equals("this") && !name.equals("root") && !scope.variables().containsKey(name)) {
				return new MethodProblem("#" + name + " is not a parameter of the method, so it would always be null",
						scope.known());
			}
		}
		if (node instanceof CompoundExpression && node.getChildCount() > 1
				&& node.getChild(0) instanceof VariableReference variable) {
			MethodProblem problem = member(name(variable), node.getChild(1), scope);
			if (problem != null) {
				return problem;
			}
		}
		for (int i = 0; i < node.getChildCount(); i++) {
			MethodProblem problem = check(node.getChild(i), scope);
			if (problem != null) {
				return problem;
			}
		}
		return null;
	}

	private static @Nullable MethodProblem member(String variable, SpelNode next, Scope scope) {
		Class<?> declared = scope.variables().get(variable);
		if (declared == null) {
			return null;
		}
		Class<?> type = ClassUtils.resolvePrimitiveIfNecessary(declared);
		if (type == Object.class || type.isInterface() || type.isArray() || Modifier.isAbstract(type.getModifiers())) {
			return null;
		}
		String fix = "correct the expression to what " + ClassUtils.getShortName(type)
				+ " has, or declare the parameter as the type it reads";
		if (next instanceof PropertyOrFieldReference property && !PROPERTIES.canRead(type, property.getName())) {
			return new MethodProblem("#" + variable + "." + property.getName()
					+ " cannot be read: the parameter is declared as " + type.getName() + ", which has no property '"
					+ property.getName() + "' (no get" + capitalize(property.getName()) + "(), is"
					+ capitalize(property.getName()) + "() or " + property.getName() + "() method, no public field)",
					fix);
		}
		if (next instanceof MethodReference call
				&& Arrays.stream(type.getMethods()).noneMatch((method) -> method.getName().equals(call.getName()))) {
			return new MethodProblem("#" + variable + "." + call.getName()
					+ "(...) cannot be called: the parameter is declared as " + type.getName()
					+ ", which has no public method '" + call.getName() + "'", fix);
		}
		return null;
	}

	private static boolean assigns(SpelNode node) {
		if (node instanceof Assign) {
			return true;
		}
		for (int i = 0; i < node.getChildCount(); i++) {
			if (assigns(node.getChild(i))) {
				return true;
			}
		}
		return false;
	}

	private static String name(VariableReference variable) {
		// toStringAST() is "#" and the name
		return variable.toStringAST().substring(1);
	}

	private static String capitalize(String name) {
		return name.isEmpty() ? name : Character.toUpperCase(name.charAt(0)) + name.substring(1);
	}

	/**
	 * The variables an expression sees.
	 *
	 * @param variables each variable's declared type
	 * @param checkNames whether a name that is not among them is an error
	 * @param known which names there are, said as how to correct an unknown one
	 */
	private record Scope(Map<String, Class<?>> variables, boolean checkNames, String known) {

	}

	/**
	 * SpEL's own property lookup ({@link ReflectivePropertyAccessor}, the one a method's
	 * evaluation context uses), asked of a declared class instead of an object.
	 */
	private static final class DeclaredTypeAccessor extends ReflectivePropertyAccessor {

		DeclaredTypeAccessor() {
			super(false);
		}

		boolean canRead(Class<?> type, String name) {
			return findGetterForProperty(name, type, false) != null || findField(name, type, false) != null;
		}

	}

}
