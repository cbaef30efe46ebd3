package io.github.idempotency.store.redis;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.IntStream;

import org.jspecify.annotations.Nullable;

import io.github.idempotency.store.ClaimOutcome;
import io.github.idempotency.store.ClaimRequest;
import io.github.idempotency.store.ReadFirst;
import org.springframework.data.redis.RedisSystemException;

/**
 * The steps of one batch claim ({@link BatchClaim} says which), whichever store runs them:
 * the calls of each step and the decoding of their replies into {@link ClaimAnswer}s,
 * nothing sent to Redis here. Not thread-safe: one batch, one step after the other.
 */
final class BatchSteps {

	private final List<ClaimRequest> requests;

	private final Function<ClaimRequest, byte[]> keys;

	private final long now;

	private final @Nullable ClaimAnswer[] answers;

	private final List<Integer> byScript = new ArrayList<>();

	private int[] unread;

	private final List<ClaimState> fresh = new ArrayList<>();

	BatchSteps(List<ClaimRequest> requests, Function<ClaimRequest, byte[]> keys, long now) {
		this.requests = requests;
		this.keys = keys;
		this.now = now;
		this.answers = new ClaimAnswer[requests.size()];
		this.unread = IntStream.range(0, requests.size()).toArray();
	}

	/** The time of the batch, in epoch milliseconds. */
	long now() {
		return this.now;
	}

	/** Whether this batch reads first, as the store's choices say. */
	boolean readsFirst(ReadFirst.Choices choices, ReadFirst mode) {
		return choices.readsFirst(mode, this.requests.get(0).id().workflow());
	}

	/** Every claim goes to {@code claim.lua}: a server before 7.0. */
	void allByScript() {
		this.unread = new int[0];
		IntStream.range(0, this.requests.size()).forEach(this.byScript::add);
	}

	/** The calls of {@code read.lua}: every key. */
	List<SlotGroupedScript.Call> readCalls() {
		List<SlotGroupedScript.Call> reads = new ArrayList<>(this.requests.size());
		for (ClaimRequest request : this.requests) {
			reads.add(new SlotGroupedScript.Call(this.keys.apply(request)));
		}
		return reads;
	}

	/**
	 * Answers the keys whose record the read found and decided; a record that needs a
	 * conditional write goes to the claim script; the keys with no record are left to
	 * {@code claim_new.lua}.
	 * @param found a value (layout 1) per key, {@code null} for none
	 */
	void answerRead(@Nullable Object[] found) {
		int[] unread = new int[this.requests.size()];
		int count = 0;
		for (int i = 0; i < unread.length; i++) {
			if (found[i] instanceof byte[] value) {
				this.answers[i] = ClaimAnswer.found(this.requests.get(i), value, Instant.ofEpochMilli(this.now));
				if (this.answers[i] == null) {
					this.byScript.add(i);
				}
			}
			else {
				unread[count++] = i;
			}
		}
		this.unread = Arrays.copyOf(unread, count);
	}

	/**
	 * The calls of {@code claim_new.lua}: {@code SET NX GET} with a new record for each key
	 * not answered yet (none when every key is answered).
	 */
	List<SlotGroupedScript.Call> claimNewCalls() {
		List<SlotGroupedScript.Call> calls = new ArrayList<>(this.unread.length);
		for (int i : this.unread) {
			ClaimRequest request = this.requests.get(i);
			ClaimState state = ClaimState.fresh(request, this.keys.apply(request), this.now);
			this.fresh.add(state);
			calls.add(new SlotGroupedScript.Call(state.key, Objects.requireNonNull(state.written()),
					RedisAccess.number(state.timeToLive())));
		}
		return calls;
	}

	/**
	 * Answers what {@code claim_new.lua} replied, and adds to the script's keys those that
	 * need it. A failure to decode a reply is added to {@code replies}.
	 * @param replies the replies, in the order of {@link #claimNewCalls()}
	 * @param leavesToScript whether an error the script answered for a key's {@code SET}
	 * leaves that key to {@code claim.lua} (otherwise it fails the batch)
	 */
	void answerClaimNew(SlotGroupedScript.Replies replies, Predicate<String> leavesToScript) {
		for (int j = 0; j < this.unread.length; j++) {
			int i = this.unread[j];
			Object reply = replies.replies[j];
			ClaimRequest request = this.requests.get(i);
			try {
				if (reply == null) {
					// its call failed: the replies' failure
					continue;
				}
				if (reply instanceof Long) {
					this.answers[i] = ClaimAnswer.acquired(this.fresh.get(j));
				}
				else if (reply instanceof byte[] value) {
					this.answers[i] = ClaimAnswer.found(request, value, Instant.ofEpochMilli(this.now));
					if (this.answers[i] == null) {
						this.byScript.add(i);
					}
				}
				else {
					String error = RedisAccess.text(((List<?>) reply).get(0));
					if (!leavesToScript.test(error)) {
						throw new RedisSystemException("Redis refused the claim of " + request.id() + ": " + error,
								null);
					}
					this.byScript.add(i);
				}
			}
			catch (RuntimeException ex) {
				replies.fail(ex);
			}
		}
	}

	/** Counts the answers of the batch in the store's read-first choices. */
	void record(ReadFirst.Choices choices, ReadFirst mode) {
		for (int i = 0; i < this.answers.length; i++) {
			ClaimAnswer answer = this.answers[i];
			choices.record(mode, this.requests.get(i).id().workflow(),
					answer != null && answer.outcome() != ClaimOutcome.ACQUIRED);
		}
	}

	/** The positions of the requests left to {@code claim.lua}, in order. */
	List<Integer> byScript() {
		return this.byScript;
	}

	/** The calls of {@code claim.lua}: the keys of {@link #byScript()}. */
	List<SlotGroupedScript.Call> scriptCalls() {
		List<SlotGroupedScript.Call> calls = new ArrayList<>(this.byScript.size());
		for (int i : this.byScript) {
			ClaimRequest request = this.requests.get(i);
			calls.add(new SlotGroupedScript.Call(this.keys.apply(request), ClaimAnswer.scriptArguments(request)));
		}
		return calls;
	}

	/** The leading arguments of {@code claim.lua}: now. */
	List<Object> scriptLeading() {
		return List.of(String.valueOf(this.now));
	}

	/**
	 * Answers what {@code claim.lua} replied.
	 * @param replies the replies, in the order of {@link #scriptCalls()}
	 */
	void answerScript(SlotGroupedScript.Replies replies) {
		for (int j = 0; j < this.byScript.size(); j++) {
			Object reply = replies.replies[j];
			if (reply != null) {
				int i = this.byScript.get(j);
				ClaimRequest request = this.requests.get(i);
				this.answers[i] = ClaimAnswer.scripted(request, (List<?>) reply, this.now, this.keys.apply(request));
			}
		}
	}

	/**
	 * The answers so far, {@code null} where a key has none (yet).
	 * @return one per request
	 */
	@Nullable ClaimAnswer[] answers() {
		return this.answers;
	}

}
