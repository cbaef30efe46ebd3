package io.github.idempotency.internal;

import io.github.idempotency.observe.Outcome;
import java.time.Duration;
import java.time.Instant;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import io.github.idempotency.IdempotencyInProgressException;
import io.github.idempotency.IdempotencyLeaseLostException;
import io.github.idempotency.IdempotencyStoreException;
import io.github.idempotency.IdempotencyTemplate;
import io.github.idempotency.IdempotentRequest;
import io.github.idempotency.InProgressPolicy;
import io.github.idempotency.metrics.IdempotencyMeters;
import io.github.idempotency.metrics.MicrometerIdempotencyObserver;
import io.github.idempotency.store.ClaimHandle;
import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ClaimResult;
import io.github.idempotency.store.IdempotencyStore;
import io.github.idempotency.store.RecordId;
import io.github.idempotency.store.RecordStatus;
import io.github.idempotency.store.memory.MemoryIdempotencyStore;
import io.github.idempotency.testfixtures.CountingIdempotencyStore;
import io.github.idempotency.testfixtures.UnreachableIdempotencyStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * {@link IdempotencyTemplate#executeAll}: a batch where each request is its own operation,
 * on the memory store.
 */
class IdempotencyTemplateBatchTest {

	private static final String WORKFLOW = "payment";

	private final ManualTime clock = new ManualTime(Instant.parse("2026-01-01T00:00:00Z"));

	private final CountingIdempotencyStore store = new CountingIdempotencyStore(new MemoryIdempotencyStore(this.clock));

	private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	private IdempotencyEngine engine = engine(this.store, EngineSettings.defaults());

	private IdempotencyTemplate template = new DefaultIdempotencyTemplate(this.engine);

	private final List<String> runs = new CopyOnWriteArrayList<>();

	@AfterEach
	void closeEngine() {
		this.engine.close();
	}

	private IdempotencyEngine engine(IdempotencyStore store, EngineSettings settings) {
		return new IdempotencyEngine(store, JsonMapper.builder().build(), settings,
				new MicrometerIdempotencyObserver(this.registry, store.backend()));
	}

	private void useSettings(EngineSettings settings) {
		this.engine.close();
		this.engine = engine(this.store, settings);
		this.template = new DefaultIdempotencyTemplate(this.engine);
	}

	private static List<IdempotentRequest> requests(String... keys) {
		List<IdempotentRequest> requests = new ArrayList<>();
		for (String key : keys) {
			requests.add(IdempotentRequest.of(WORKFLOW, key).withRecordFailureFor(CardDeclinedException.class));
		}
		return requests;
	}

	private String charge(IdempotentRequest request) {
		String key = (String) request.key();
		this.runs.add(key);
		return "receipt-" + key + "-" + this.runs.size();
	}

	private double requests(Outcome outcome) {
		return this.registry.counter(IdempotencyMeters.REQUESTS, "workflow", WORKFLOW, "backend", "memory", "outcome",
				outcome.tag()).count();
	}

	private RecordStatus status(String key) {
		return this.store.find(new RecordId(WORKFLOW, key)).orElseThrow().status();
	}

	@Test
	void newItemsRunInOrderAndDuplicatesAreAnsweredWithTheirStoredResults() {
		List<String> first = this.template.executeAll(requests("a", "b"), String.class, this::charge);
		assertThat(first).containsExactly("receipt-a-1", "receipt-b-2");
		List<String> second = this.template.executeAll(requests("c", "a", "d", "b"), String.class, this::charge);
		assertThat(second).containsExactly("receipt-c-3", "receipt-a-1", "receipt-d-4", "receipt-b-2");
		assertThat(this.runs).containsExactly("a", "b", "c", "d");
		assertThat(requests(Outcome.MISS)).isEqualTo(4);
		assertThat(requests(Outcome.HIT)).isEqualTo(2);
		assertThat(status("d")).isEqualTo(RecordStatus.COMPLETED);
	}

	@Test
	void aKeyNamedTwiceRunsOnceAndBothAreAnsweredWithItsResult() {
		List<String> results = this.template.executeAll(requests("a", "b", "a"), String.class, this::charge);
		assertThat(results).containsExactly("receipt-a-1", "receipt-b-2", "receipt-a-1");
		assertThat(this.runs).containsExactly("a", "b");
		assertThat(requests(Outcome.MISS)).isEqualTo(2);
		assertThat(requests(Outcome.HIT)).isEqualTo(1);
	}

	@Test
	void anItemThatFailedPermanentlyBeforeIsSkippedAndCountedFailed() {
		assertThatExceptionOfType(CardDeclinedException.class).isThrownBy(() -> this.template
			.execute(requests("declined").get(0), String.class, () -> {
				throw new CardDeclinedException();
			}));
		List<String> results = this.template.executeAll(requests("declined", "b"), String.class, this::charge);
		assertThat(results).containsExactly(null, "receipt-b-1");
		assertThat(this.runs).containsExactly("b");
		assertThat(requests(Outcome.FAILED)).isEqualTo(1);
	}

	@Test
	void aKeyReusedWithAnotherPayloadIsSkippedAndCountedMismatch() {
		this.template.executeAll(List.of(IdempotentRequest.of(WORKFLOW, "a").withPayload("100")), String.class,
				this::charge);
		List<String> results = this.template.executeAll(List.of(IdempotentRequest.of(WORKFLOW, "a").withPayload("999"),
				IdempotentRequest.of(WORKFLOW, "b").withPayload("100"),
				IdempotentRequest.of(WORKFLOW, "b").withPayload("555")), String.class, this::charge);
		assertThat(results).containsExactly(null, "receipt-b-2", null);
		assertThat(this.runs).containsExactly("a", "b");
		assertThat(requests(Outcome.MISMATCH)).isEqualTo(2);
	}

	@Test
	void anInvalidKeyIsSkippedAndCountedInvalid() {
		List<String> results = this.template.executeAll(
				List.of(IdempotentRequest.of(WORKFLOW, null), IdempotentRequest.of(WORKFLOW, "b")), String.class,
				this::charge);
		assertThat(results).containsExactly(null, "receipt-b-1");
		assertThat(requests(Outcome.INVALID_KEY)).isEqualTo(1);
	}

	@Test
	void aKeyRunningElsewhereRejectsTheBatchAndReleasesWhatItAcquired() {
		holdElsewhere("busy");
		List<IdempotentRequest> batch = List.of(IdempotentRequest.of(WORKFLOW, "a"),
				IdempotentRequest.of(WORKFLOW, "busy"));
		List<IdempotentRequest> rejecting = batch.stream().map((r) -> r.withOnInProgress(InProgressPolicy.REJECT))
			.toList();
		assertThatExceptionOfType(IdempotencyInProgressException.class)
			.isThrownBy(() -> this.template.executeAll(rejecting, String.class, this::charge));
		assertThat(this.runs).isEmpty();
		assertThat(this.store.find(new RecordId(WORKFLOW, "a"))).isEmpty();
		assertThat(requests(Outcome.CONFLICT)).isEqualTo(1);
	}

	@Test
	void aKeyRunningElsewhereIsWaitedForPollingOnlyThatItem() throws Exception {
		ClaimHandle busy = holdElsewhere("busy");
		CompletableFuture<List<String>> batch = CompletableFuture.supplyAsync(() -> this.template
			.executeAll(requests("a", "busy", "b"), String.class, this::charge));
		await().atMost(Duration.ofSeconds(10)).until(() -> this.store.calls("claim") >= 6);
		assertThat(batch).isNotDone();
		busy.complete("\"receipt-elsewhere\"");
		assertThat(batch.get()).containsExactly("receipt-a-1", "receipt-elsewhere", "receipt-b-2");
		assertThat(this.runs).containsExactly("a", "b");
		assertThat(this.registry.counter(IdempotencyMeters.CONFLICTS, "workflow", WORKFLOW, "backend", "memory")
			.count()).isEqualTo(1);
		assertThat(requests(Outcome.HIT)).isEqualTo(1);
	}

	@Test
	void aWaitThatTimesOutRejectsTheBatchAndReleasesWhatItAcquired() {
		useSettings(EngineSettings.builder().waitTimeout(Duration.ofMillis(50)).build());
		holdElsewhere("busy");
		assertThatExceptionOfType(IdempotencyInProgressException.class)
			.isThrownBy(() -> this.template.executeAll(requests("a", "busy"), String.class, this::charge));
		assertThat(this.runs).isEmpty();
		assertThat(this.store.find(new RecordId(WORKFLOW, "a"))).isEmpty();
	}

	@Test
	void anItemThatThrowsCompletesThoseBeforeItAndReleasesItselfAndThoseAfter() {
		IllegalStateException failure = new IllegalStateException("broker down");
		assertThatExceptionOfType(IllegalStateException.class)
			.isThrownBy(() -> this.template.executeAll(requests("a", "b", "c"), String.class, (request) -> {
				if ("b".equals(request.key())) {
					throw failure;
				}
				return charge(request);
			}))
			.isSameAs(failure);
		assertThat(this.runs).containsExactly("a");
		assertThat(status("a")).isEqualTo(RecordStatus.COMPLETED);
		assertThat(this.store.find(new RecordId(WORKFLOW, "b"))).isEmpty();
		assertThat(this.store.find(new RecordId(WORKFLOW, "c"))).isEmpty();
		List<String> retried = this.template.executeAll(requests("a", "b", "c"), String.class, this::charge);
		assertThat(retried).containsExactly("receipt-a-1", "receipt-b-2", "receipt-c-3");
	}

	@Test
	void aCheckedExceptionOfAnItemComesBackUnchangedAndTheItemsBeforeItStayCompleted() {
		IOException failure = new IOException("disk full");
		assertThatExceptionOfType(IOException.class)
			.isThrownBy(() -> this.template.executeAll(requests("a", "b", "c"), String.class, (request) -> {
				if ("b".equals(request.key())) {
					throw IdempotencyTemplateBatchTest.<RuntimeException>sneaky(failure);
				}
				return charge(request);
			}))
			.isSameAs(failure);
		assertThat(status("a")).isEqualTo(RecordStatus.COMPLETED);
		assertThat(this.store.find(new RecordId(WORKFLOW, "b"))).isEmpty();
		assertThat(this.store.find(new RecordId(WORKFLOW, "c"))).isEmpty();
		assertThat(this.template.executeAll(requests("a", "b", "c"), String.class, this::charge))
			.containsExactly("receipt-a-1", "receipt-b-2", "receipt-c-3");
	}

	@SuppressWarnings("unchecked")
	private static <E extends Throwable> E sneaky(Throwable ex) throws E {
		throw (E) ex;
	}

	@Test
	void anItemThatThrowsAPermanentFailureIsRecordedFailed() {
		assertThatExceptionOfType(CardDeclinedException.class)
			.isThrownBy(() -> this.template.executeAll(requests("a", "b", "c"), String.class, (request) -> {
				if ("b".equals(request.key())) {
					throw new CardDeclinedException();
				}
				return charge(request);
			}));
		assertThat(status("a")).isEqualTo(RecordStatus.COMPLETED);
		assertThat(status("b")).isEqualTo(RecordStatus.FAILED);
		assertThat(this.store.find(new RecordId(WORKFLOW, "c"))).isEmpty();
	}

	@Test
	void aPermanentFailureOfAnItemTheStoreFailsToTakeIsRecordedOnARetrySoTheRedeliveryReplaysIt() {
		this.store.failCalls("fail", 2);
		Function<IdempotentRequest, String> declineB = (request) -> {
			if ("b".equals(request.key())) {
				this.runs.add("b");
				throw new CardDeclinedException();
			}
			return charge(request);
		};
		assertThatExceptionOfType(CardDeclinedException.class)
			.isThrownBy(() -> this.template.executeAll(requests("a", "b", "c"), String.class, declineB::apply))
			.satisfies((ex) -> assertThat(ex.getSuppressed()).isEmpty());
		assertThat(this.store.calls("fail")).isEqualTo(3);
		assertThat(status("b")).isEqualTo(RecordStatus.FAILED);
		this.clock.advance(Duration.ofMinutes(5));
		assertThat(this.template.executeAll(requests("a", "b", "c"), String.class, declineB::apply))
			.containsExactly("receipt-a-1", null, "receipt-c-3");
		assertThat(this.runs).containsExactly("a", "b", "c");
	}

	@Test
	void theItemsThatRanAreCompletedInOneStoreCallAndALostLeaseIsThrownAfterTheOthersAreCompleted() {
		assertThatExceptionOfType(IdempotencyLeaseLostException.class)
			.isThrownBy(() -> this.template.executeAll(requests("a", "b", "c"), String.class, (request) -> {
				if ("b".equals(request.key())) {
					this.clock.advance(EngineSettings.defaults().leaseTtl().plusSeconds(1));
					ClaimResult takeover = this.store.claim(new ClaimRequest(new RecordId(WORKFLOW, "b"), "elsewhere",
							null, Duration.ofMinutes(1), Duration.ofDays(1)));
					assertThat(takeover.isTakeover()).isTrue();
				}
				return charge(request);
			}))
			.withMessageContaining("'b'");
		assertThat(status("a")).isEqualTo(RecordStatus.COMPLETED);
		assertThat(status("c")).isEqualTo(RecordStatus.COMPLETED);
		assertThat(this.store.find(new RecordId(WORKFLOW, "b")).orElseThrow().owner()).isEqualTo("elsewhere");
		assertThat(this.registry.counter(IdempotencyMeters.LEASE_LOST, "workflow", WORKFLOW, "backend", "memory")
			.count()).isEqualTo(1);
		assertThat(this.registry.timer(IdempotencyMeters.STORE, "backend", "memory", "operation", "complete", "result",
				"ok").count()).as("one completion call for the batch").isEqualTo(1);
		assertThat(requests(Outcome.MISS)).isEqualTo(3);
	}

	@Test
	void resultsTheStoreFailsToTakeAreStoredOnARetrySoTheRedeliveryIsAnswered() {
		this.store.failCalls("complete", 1);
		assertThat(this.template.executeAll(requests("a", "b"), String.class, this::charge))
			.containsExactly("receipt-a-1", "receipt-b-2");
		assertThat(status("a")).isEqualTo(RecordStatus.COMPLETED);
		assertThat(status("b")).isEqualTo(RecordStatus.COMPLETED);
		assertThat(this.registry.timer(IdempotencyMeters.STORE, "backend", "memory", "operation", "complete", "result",
				"error").count()).isEqualTo(1);
		this.clock.advance(Duration.ofMinutes(5));
		assertThat(this.template.executeAll(requests("a", "b"), String.class, this::charge))
			.containsExactly("receipt-a-1", "receipt-b-2");
		assertThat(this.runs).containsExactly("a", "b");
	}

	@Test
	void aBatchCompletionThatFailsHalfwayIsRetriedWithoutReportingTheStoredHalfAsLost() {
		this.store.loseAnswers("complete", 1);
		assertThat(this.template.executeAll(requests("a", "b"), String.class, this::charge))
			.containsExactly("receipt-a-1", "receipt-b-2");
		assertThat(status("a")).isEqualTo(RecordStatus.COMPLETED);
		assertThat(status("b")).isEqualTo(RecordStatus.COMPLETED);
		assertThat(this.registry.counter(IdempotencyMeters.LEASE_LOST, "workflow", WORKFLOW, "backend", "memory")
			.count()).isZero();
	}

	@Test
	void aStoreThatCannotBeReachedRunsNothing() {
		this.engine.close();
		this.engine = engine(new UnreachableIdempotencyStore("memory"), EngineSettings.defaults());
		this.template = new DefaultIdempotencyTemplate(this.engine);
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> this.template.executeAll(requests("a", "b"), String.class, this::charge));
		assertThat(this.runs).isEmpty();
	}

	@Test
	void aStoredResultThatCannotBeReadFailsTheBatchAndReleasesEveryClaimItMade() {
		this.template.executeAll(requests("a"), String.class, this::charge);
		assertThatExceptionOfType(IdempotencyStoreException.class).isThrownBy(() -> this.template
			.executeAll(requests("b", "a", "c"), Integer.class, (request) -> 1));
		assertThat(this.store.find(new RecordId(WORKFLOW, "b"))).isEmpty();
		assertThat(this.store.find(new RecordId(WORKFLOW, "c"))).isEmpty();
	}

	@Test
	void requestsOfOneBatchShareTheirWorkflowAndSettings() {
		IdempotentRequest first = IdempotentRequest.of(WORKFLOW, "a");
		List<IdempotentRequest> others = List.of(IdempotentRequest.of("other", "b"),
				IdempotentRequest.of(WORKFLOW, "b").withPayload("p"),
				IdempotentRequest.of(WORKFLOW, "b").withLeaseTtl(Duration.ofSeconds(7)),
				IdempotentRequest.of(WORKFLOW, "b").withRetention(Duration.ofHours(7)),
				IdempotentRequest.of(WORKFLOW, "b").withOnInProgress(InProgressPolicy.REJECT),
				IdempotentRequest.of(WORKFLOW, "b").withRecordFailureFor(CardDeclinedException.class));
		for (IdempotentRequest other : others) {
			assertThatIllegalArgumentException().as(other.toString())
				.isThrownBy(() -> this.template.executeAll(List.of(first, other), String.class, this::charge));
		}
		assertThat(this.template.executeAll(List.of(first, IdempotentRequest.of(WORKFLOW, "b")), String.class,
				this::charge)).hasSize(2);
		assertThat(this.template.executeAll(List.of(), String.class, this::charge)).isEmpty();
	}

	private ClaimHandle holdElsewhere(String key) {
		ClaimResult claim = this.store.claim(new ClaimRequest(new RecordId(WORKFLOW, key), "elsewhere", null,
				Duration.ofSeconds(30), Duration.ofDays(1)));
		assertThat(claim.outcome()).isEqualTo(ClaimOutcome.ACQUIRED);
		this.store.reset();
		return claim.acquiredHandle();
	}

	static class CardDeclinedException extends RuntimeException {

	}

}
