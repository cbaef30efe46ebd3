package io.github.idempotency.internal;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The engine's one source of time and its one scheduler: every lease, wait, backoff,
 * renewal and retry reads and waits on it, nothing else in the engine does. The system's
 * ({@link #system()}) by default; a test gives the engine a manual one, on which those run
 * without real time passing.
 */
interface EngineTime extends AutoCloseable {

	/** Now, in nanoseconds on a monotonic scale, as {@link System#nanoTime()}. */
	long nanoTime();

	/**
	 * Waits on this thread.
	 * @param nanos how long
	 * @return {@code false} when the thread was interrupted
	 */
	boolean sleep(long nanos);

	/**
	 * Runs a short task later, on the scheduler's threads.
	 * @param task the task
	 * @param delayNanos when
	 * @return its future, to cancel
	 * @throws java.util.concurrent.RejectedExecutionException once closed
	 */
	Future<?> schedule(Runnable task, long delayNanos);

	/**
	 * Runs a task that may block on the store (a lease renewal), off the scheduler's
	 * threads, so that it delays nothing else.
	 * @param task the task
	 * @throws java.util.concurrent.RejectedExecutionException once closed
	 */
	void execute(Runnable task);

	/** Takes no new task; tasks already scheduled still run. */
	@Override
	void close();

	/**
	 * The system's time: {@link System#nanoTime()}, two scheduler threads
	 * ({@code idempotency-scheduler}) and a pool for blocking tasks
	 * ({@code idempotency-lease-renewal}), all daemons.
	 * @return a new one, to close with the engine
	 */
	static EngineTime system() {
		return new SystemTime();
	}

	/** The system's time. */
	final class SystemTime implements EngineTime {

		private final ScheduledExecutorService scheduler;

		private final ExecutorService blocking = Executors.newCachedThreadPool((task) -> daemon(task,
				"idempotency-lease-renewal"));

		SystemTime() {
			ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(2,
					(task) -> daemon(task, "idempotency-scheduler"));
			scheduler.setRemoveOnCancelPolicy(true);
			this.scheduler = scheduler;
		}

		private static Thread daemon(Runnable task, String name) {
			Thread thread = new Thread(task, name);
			thread.setDaemon(true);
			return thread;
		}

		@Override
		public long nanoTime() {
			return System.nanoTime();
		}

		@Override
		public boolean sleep(long nanos) {
			LockSupport.parkNanos(nanos);
			return !Thread.currentThread().isInterrupted();
		}

		@Override
		public Future<?> schedule(Runnable task, long delayNanos) {
			return this.scheduler.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
		}

		@Override
		public void execute(Runnable task) {
			this.blocking.execute(task);
		}

		@Override
		public void close() {
			this.scheduler.shutdown();
			this.blocking.shutdownNow();
		}

	}

}
