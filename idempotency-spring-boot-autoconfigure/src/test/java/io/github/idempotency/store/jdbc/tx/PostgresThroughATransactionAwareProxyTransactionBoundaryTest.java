package io.github.idempotency.store.jdbc.tx;

import javax.sql.DataSource;

import io.github.idempotency.testservers.TestServers;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The same boundaries when the application's {@link DataSource} bean is a
 * {@link TransactionAwareDataSourceProxy}: its transaction manager binds the connection to
 * the proxy's target, as Spring's do, and the store must see that transaction all the
 * same (else it would hold the claim by a lease inside it, and a read-only transaction
 * would let a fail-open call run unprotected).
 */
@Import(PostgresThroughATransactionAwareProxyTransactionBoundaryTest.TransactionAwareDataSource.class)
class PostgresThroughATransactionAwareProxyTransactionBoundaryTest extends TransactionBoundaryTests {

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		registry.add("spring.datasource.url", TestServers::postgresUrl);
		registry.add("idempotency.jdbc.initialize-schema", () -> "always");
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class TransactionAwareDataSource {

		@Bean
		static BeanPostProcessor transactionAwareDataSource() {
			return new BeanPostProcessor() {

				@Override
				public Object postProcessAfterInitialization(Object bean, String beanName) {
					return (bean instanceof DataSource dataSource && !(bean instanceof TransactionAwareDataSourceProxy))
							? new TransactionAwareDataSourceProxy(dataSource) : bean;
				}

			};
		}

	}

}
