package io.github.idempotency.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Keys finished before the measurement, handed out in windows of distinct keys.
 */
final class BatchDuplicates {

	static final int COUNT = 1000;

	private final String[] keys = new String[COUNT];

	private int next;

	BatchDuplicates() {
		String run = UUID.randomUUID().toString().substring(0, 13);
		for (int i = 0; i < COUNT; i++) {
			this.keys[i] = "batch-dup-" + run + "-" + i;
		}
	}

	synchronized List<String> next(int batch) {
		List<String> window = new ArrayList<>(batch);
		for (int i = 0; i < batch; i++) {
			window.add(this.keys[this.next]);
			this.next = (this.next + 1) % COUNT;
		}
		return window;
	}

	List<List<String>> all(int batch) {
		List<List<String>> batches = new ArrayList<>();
		for (int i = 0; i < COUNT; i += batch) {
			batches.add(List.of(this.keys).subList(i, Math.min(COUNT, i + batch)));
		}
		return batches;
	}

}
