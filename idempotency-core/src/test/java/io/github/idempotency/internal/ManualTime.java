package io.github.idempotency.internal;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The engine's time, moved by hand, and the stores' clock too: {@link #advance} moves it,
 * running the tasks that come due in their order on the advancing thread (blocking tasks
 * too) and waking the threads whose waits ended. A lease, a wait or a retry then takes no
 * real time at all. A test that gives the engine its real time may still use this as the
 * stores' clock alone.
 */
public final class ManualTime extends Clock implements EngineTime {

	private volatile Instant now;

	private final Instant origin;

	private final PriorityQueue<Task> tasks = new PriorityQueue<>(
			Comparator.comparingLong(Task::due).thenComparingLong(Task::sequence));

	private final List<Sleeper> sleepers = new ArrayList<>();

	private long sequence;

	private boolean closed;

	public ManualTime(Instant now) {
		this.now = now;
		this.origin = now;
	}

	@Override
	public Instant instant() {
		return this.now;
	}

	@Override
	public ZoneId getZone() {
		return ZoneOffset.UTC;
	}

	@Override
	public Clock withZone(ZoneId zone) {
		return this;
	}

	@Override
	public long nanoTime() {
		return Duration.between(this.origin, this.now).toNanos();
	}

	@Override
	public boolean sleep(long nanos) {
		Sleeper sleeper;
		synchronized (this) {
			sleeper = new Sleeper(nanoTime() + nanos, new CountDownLatch(1));
			this.sleepers.add(sleeper);
			notifyAll();
		}
		try {
			// a safety net against a test that never advances, not a timing
			return sleeper.woken().await(60, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	@Override
	public synchronized Future<?> schedule(Runnable task, long delayNanos) {
		if (this.closed) {
			throw new RejectedExecutionException("closed");
		}
		Task scheduled = new Task(nanoTime() + delayNanos, this.sequence++, new FutureTask<>(task, null));
		this.tasks.add(scheduled);
		return scheduled.future();
	}

	@Override
	public void execute(Runnable task) {
		synchronized (this) {
			if (this.closed) {
				throw new RejectedExecutionException("closed");
			}
		}
		task.run();
	}

	@Override
	public synchronized void close() {
		this.closed = true;
	}

	/**
	 * How many threads wait on this time.
	 */
	synchronized int sleepers() {
		return this.sleepers.size();
	}

	/**
	 * Waits (in real time, bounded) until {@code count} threads wait on this time.
	 */
	synchronized void awaitSleepers(int count) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (this.sleepers.size() < count) {
			long left = deadline - System.nanoTime();
			if (left <= 0) {
				throw new AssertionError("Expected " + count + " waiting thread(s), found " + this.sleepers.size());
			}
			TimeUnit.NANOSECONDS.timedWait(this, left);
		}
	}

	/**
	 * Moves time on by {@code duration}, running each task when its time comes.
	 */
	public void advance(Duration duration) {
		long target;
		synchronized (this) {
			target = nanoTime() + duration.toNanos();
		}
		while (true) {
			Task next;
			synchronized (this) {
				next = this.tasks.peek();
				if (next == null || next.due() > target) {
					moveTo(target);
					wakeSleepers();
					return;
				}
				this.tasks.poll();
				moveTo(Math.max(next.due(), nanoTime()));
				wakeSleepers();
			}
			next.future().run();
		}
	}

	private void moveTo(long nanos) {
		long now = nanoTime();
		if (nanos > now) {
			this.now = this.now.plusNanos(nanos - now);
		}
	}

	private void wakeSleepers() {
		long now = nanoTime();
		this.sleepers.removeIf((sleeper) -> {
			if (sleeper.until() <= now) {
				sleeper.woken().countDown();
				return true;
			}
			return false;
		});
	}

	private record Task(long due, long sequence, FutureTask<?> future) {
	}

	private record Sleeper(long until, CountDownLatch woken) {
	}

}
