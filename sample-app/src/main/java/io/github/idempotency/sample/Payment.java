package io.github.idempotency.sample;

import java.time.Instant;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.Id;

/**
 * A charged payment: the business effect that must happen once per payment event.
 */
@Entity
public class Payment {

	@Id
	@GeneratedValue
	private Long id;

	@Column(nullable = false)
	private String paymentId;

	@Column(nullable = false)
	private long amountCents;

	@Column(nullable = false)
	private Instant chargedAt;

	protected Payment() {
	}

	public Payment(String paymentId, long amountCents, Instant chargedAt) {
		this.paymentId = paymentId;
		this.amountCents = amountCents;
		this.chargedAt = chargedAt;
	}

	public Long getId() {
		return this.id;
	}

	public String getPaymentId() {
		return this.paymentId;
	}

	public long getAmountCents() {
		return this.amountCents;
	}

	public Instant getChargedAt() {
		return this.chargedAt;
	}

}
