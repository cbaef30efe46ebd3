package io.github.idempotency.benchmarks;

import java.util.ArrayList;
import java.util.List;

import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * How many messages one batch has.
 */
@State(Scope.Benchmark)
public class BatchSize {

	@Param({ "1", "10", "100", "500" })
	public int batch;

	List<String> fresh(Keys keys) {
		List<String> batch = new ArrayList<>(this.batch);
		for (int i = 0; i < this.batch; i++) {
			batch.add(keys.next());
		}
		return batch;
	}

}
