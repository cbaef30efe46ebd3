package io.github.idempotency.store.jdbc.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

@Entity
@Table(name = "jpa_test_payment")
public class Payment {

	@Id
	@GeneratedValue
	private Long id;

	private String paymentKey;

	private int amount;

	protected Payment() {
	}

	Payment(String paymentKey, int amount) {
		this.paymentKey = paymentKey;
		this.amount = amount;
	}

	public Long getId() {
		return this.id;
	}

	public String getPaymentKey() {
		return this.paymentKey;
	}

	public int getAmount() {
		return this.amount;
	}

}
