package io.github.idempotency.sample;

import org.springframework.data.jpa.repository.JpaRepository;

/**
 * The charged payments.
 */
public interface PaymentRepository extends JpaRepository<Payment, Long> {

}
