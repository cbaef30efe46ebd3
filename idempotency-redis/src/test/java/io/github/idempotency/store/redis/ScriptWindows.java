package io.github.idempotency.store.redis;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.util.ClassUtils;

/**
 * A test's way into the windows between the steps of a batch: a connection factory in
 * front of another whose connections run a callback just before a script of the store is
 * sent through Lettuce's asynchronous API (as a batch sends each of its steps), optionally
 * only when another script was the one sent that way before it on this thread.
 */
final class ScriptWindows {

	private final List<Window> windows = new CopyOnWriteArrayList<>();

	private final ThreadLocal<@Nullable String> lastSent = new ThreadLocal<>();

	private final RedisConnectionFactory factory;

	ScriptWindows(RedisConnectionFactory target) {
		this.factory = proxy(target, new Class<?>[] { RedisConnectionFactory.class }, false, (method, args, result) -> {
			String name = method.getName();
			return (name.equals("getConnection") || name.equals("getClusterConnection")) ? connection(result) : result;
		});
	}

	/**
	 * The connection factory to give the store.
	 * @return the factory whose batches open the windows
	 */
	RedisConnectionFactory factory() {
		return this.factory;
	}

	/**
	 * Runs {@code callback} before each batch call of {@code script}.
	 * @param script the script of the step
	 * @param callback what to run
	 */
	void before(RedisScript<?> script, Runnable callback) {
		this.windows.add(new Window(null, script.getSha1(), callback));
	}

	/**
	 * Runs {@code callback} before each batch call of {@code script} that follows one of
	 * {@code previous} on the same thread.
	 * @param previous the step before
	 * @param script the step
	 * @param callback what to run
	 */
	void between(RedisScript<?> previous, RedisScript<?> script, Runnable callback) {
		this.windows.add(new Window(previous.getSha1(), script.getSha1(), callback));
	}

	private Object connection(Object connection) {
		return proxy(connection, interfaces(connection), false, (method, args, result) -> {
			if (!method.getName().equals("getNativeConnection") || result == null) {
				return result;
			}
			// Lettuce's commands, which a batch sends its steps through
			return proxy(result, interfaces(result), true, (call, callArgs, value) -> value);
		});
	}

	/** Before an asynchronous {@code EVALSHA} (the {@code EVAL} after a NOSCRIPT is the same call). */
	private void sending(Method method, @Nullable Object @Nullable [] args) {
		if (method.getName().equals("evalsha") && args != null && args.length > 0 && args[0] instanceof String sha) {
			String previous = this.lastSent.get();
			this.lastSent.set(sha);
			for (Window window : this.windows) {
				if (window.sha().equals(sha) && (window.previous() == null || window.previous().equals(previous))) {
					window.callback().run();
				}
			}
		}
	}

	private static Class<?>[] interfaces(Object target) {
		return ClassUtils.getAllInterfacesForClass(target.getClass(), target.getClass().getClassLoader());
	}

	/**
	 * A proxy of {@code target} with {@code interfaces}, whose calls go to the target
	 * (when {@code watched}, an {@code EVALSHA} after the windows before it) and whose
	 * results pass through {@code results}.
	 */
	@SuppressWarnings("unchecked")
	private <T> T proxy(T target, Class<?>[] interfaces, boolean watched, Results results) {
		return (T) Proxy.newProxyInstance(target.getClass().getClassLoader(), interfaces, (proxy, method, args) -> {
			if (method.getDeclaringClass() == Object.class && method.getName().equals("equals")) {
				return proxy == args[0];
			}
			if (method.getDeclaringClass() == Object.class && method.getName().equals("hashCode")) {
				return System.identityHashCode(proxy);
			}
			if (watched) {
				sending(method, args);
			}
			try {
				return results.apply(method, args, method.invoke(target, args));
			}
			catch (InvocationTargetException ex) {
				throw ex.getTargetException();
			}
		});
	}

	private interface Results {

		Object apply(Method method, @Nullable Object @Nullable [] args, Object result);

	}

	private record Window(@Nullable String previous, String sha, Runnable callback) {
	}

}
