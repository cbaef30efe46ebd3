package io.github.idempotency.store.jdbc.jpa;

import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;

import io.github.idempotency.Idempotent;
import org.springframework.transaction.annotation.Transactional;

/**
 * Business writes and idempotency in one transaction.
 */
public class PaymentService {

	@PersistenceContext
	private EntityManager entityManager;

	@Transactional
	@Idempotent(key = "#key", workflow = "jpa-payment")
	public Receipt pay(String key, int amount) {
		this.entityManager.persist(new Payment(key, amount));
		this.entityManager.flush();
		return new Receipt(key, amount);
	}

	@Transactional
	@Idempotent(key = "#key", workflow = "jpa-payment")
	public Receipt payWhile(String key, Runnable during) {
		this.entityManager.persist(new Payment(key, 1));
		this.entityManager.flush();
		during.run();
		return new Receipt(key, 1);
	}

	@Transactional
	@Idempotent(key = "#key", workflow = "jpa-payment")
	public Receipt payThenFail(String key) {
		this.entityManager.persist(new Payment(key, 1));
		this.entityManager.flush();
		throw new IllegalStateException("card network down");
	}

	@Transactional
	@Idempotent(key = "#key", workflow = "jpa-payment")
	public Unwritable payWithUnwritableResult(String key) {
		this.entityManager.persist(new Payment(key, 1));
		this.entityManager.flush();
		return new Unwritable();
	}

	@Transactional(readOnly = true)
	@Idempotent(key = "#key", workflow = "jpa-lookup")
	public long lookUp(String key) {
		return payments(key);
	}

	@Transactional(readOnly = true)
	public long payments(String keyPrefix) {
		return this.entityManager
			.createQuery("select count(p) from Payment p where p.paymentKey like :prefix", Long.class)
			.setParameter("prefix", keyPrefix + "%")
			.getSingleResult();
	}

	public record Receipt(String key, int amount) {
	}

	/**
	 * A result Jackson can describe but not write: its getter throws.
	 */
	public static class Unwritable {

		public String getValue() {
			throw new IllegalStateException("cannot be written");
		}

		public void setValue(String value) {
		}

	}

}
